import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillsHttp } from '../helpers/skills-http.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('skills registry: versions, review gate and ownership', () => {
  let stack: TestStack;
  let key: string;
  const owner = { tenantId: 'acme', userId: 'registrar' };
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, owner);
  });
  after(() => stack.stop());
  const { post, get, bytesOf, counts } = skillsHttp(
    () => stack,
    () => key,
  );

  describe('versions', () => {
    it('appends versions: the active one moves forward, older ones stay readable and exportable verbatim', async () => {
      const v1 = skillMd({ name: 'evolving', body: 'First procedure.' });
      const v2 = skillMd({ name: 'evolving', body: 'Second procedure.' });
      const { id } = await stack.api.createSkill(key, v1);
      const res = await post(`/${id}/versions`, { md: v2 });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.version, 2);
      const detail = await get(`/${id}`);
      assert.equal(detail.body.activeVersion, 2);
      assert.deepEqual(detail.body.versions, [1, 2]);
      assert.match(detail.body.body, /Second/);
      assert.match((await get(`/${id}?version=1`)).body.body, /First/);
      assert.equal((await bytesOf(`/${id}/export?version=1`)).bytes.toString(), v1);
      assert.equal((await bytesOf(`/${id}/export`)).bytes.toString(), v2);
      assert.equal(
        (await post(`/${id}/versions`, { json: { skillMd: v2 } })).body.version,
        3,
        'a version of the same content is still a new version',
      );
    });

    it('refuses a version that renames the skill (422 naming `name`) or is invalid (400), storing nothing', async () => {
      const { id } = await stack.api.createSkill(key, skillMd({ name: 'fixed-name' }));
      const before = await counts();
      const renamed = await post(`/${id}/versions`, { md: skillMd({ name: 'new-name' }) });
      assert.equal(renamed.status, 422);
      assert.equal(renamed.body.error.details.fields[0].field, 'name');
      const invalid = await post(`/${id}/versions`, { md: '---\nname: fixed-name\n---\n' });
      assert.equal(invalid.status, 400);
      assert.deepEqual(await counts(), before);
      assert.equal((await get(`/${id}`)).body.activeVersion, 1);
    });

    it('never lets a stored version be rewritten or deleted, even by the database', async () => {
      const { id } = await stack.api.createSkill(key, skillMd({ name: 'immutable' }));
      await assert.rejects(
        stack.db.updateTable('skill_versions').set({ body: 'tampered' }).where('skill_id', '=', id).execute(),
        /immutable/,
      );
      await assert.rejects(stack.db.deleteFrom('skill_versions').where('skill_id', '=', id).execute(), /immutable/);
      assert.equal((await get(`/${id}`)).body.body, 'Use the tools to answer the objective.');
    });
  });

  describe('review gate', () => {
    it('refuses missions on a quarantined skill until a skill.review key activates it; deactivate takes it out of use', async () => {
      const res = await post('/import', { md: skillMd({ name: 'gated', maxTurns: 2 }) });
      const { id } = res.body;
      const refused = await stack.api.request('POST', '/api/v1/missions', {
        key,
        body: { skill: 'gated', objective: 'Go.', workspaceCode: 'ws' },
      });
      assert.equal(refused.status, 422);
      assert.equal(refused.body.error.code, 'unprocessable');
      assert.match(refused.body.error.message, /quarantined.*skill\.review/);

      const writer = await stack.api.newKey(['skill.read', 'skill.write', 'mission.run', 'mission.read'], owner);
      assert.equal((await post(`/${id}/activate`, { key: writer })).status, 403, 'skill.write alone cannot activate');
      const activated = await post(`/${id}/activate`);
      assert.equal(activated.status, 200);
      assert.equal(activated.body.status, 'active');
      assert.equal((await post(`/${id}/activate`)).body.status, 'active', 'activating twice is harmless');

      stack.model.enqueue({ reply: { text: 'done' } });
      const mission = await stack.api.startMission(key, { skill: 'gated', objective: 'Go.', idempotencyKey: 'gated-1' });
      assert.equal((await stack.api.waitForEnd(key, mission.id)).status, 'completed');

      const deactivated = await post(`/${id}/deactivate`);
      assert.equal(deactivated.body.status, 'draft');
      const again = await stack.api.request('POST', '/api/v1/missions', {
        key,
        body: { skill: 'gated', objective: 'Go.', workspaceCode: 'ws' },
      });
      assert.equal(again.status, 422);
      assert.match(again.body.error.message, /draft/);
      const repeat = await stack.api.request('POST', '/api/v1/missions', {
        key,
        body: { skill: 'gated', objective: 'Go.', workspaceCode: 'ws', idempotencyKey: 'gated-1' },
      });
      assert.deepEqual([repeat.status, repeat.body.id], [202, mission.id], 'a repeated key still answers with its mission');
      assert.equal((await get(`/${id}`)).status, 200, 'deactivating deletes nothing');
    });

    it('answers 409 to deactivating a quarantined skill, and lists skills by status', async () => {
      const { body } = await post('/import', { md: skillMd({ name: 'still-quarantined' }) });
      assert.equal((await post(`/${body.id}/deactivate`)).status, 409);
      const listed = await get('/?status=quarantined');
      assert.ok(listed.body.items.some((s: { name: string }) => s.name === 'still-quarantined'));
      assert.ok(listed.body.items.every((s: { status: string }) => s.status === 'quarantined'));
      assert.equal((await get('/?status=retired')).status, 400);
    });

    it('enforces skill.read and skill.write', async () => {
      const reader = await stack.api.newKey(['skill.read'], owner);
      assert.equal((await post('', { md: skillMd({ name: 'nope' }), key: reader })).status, 403);
      assert.equal((await post('/import', { md: skillMd({ name: 'nope' }), key: reader })).status, 403);
      const runner = await stack.api.newKey(['mission.run'], owner);
      assert.equal((await get('/', runner)).status, 403);
      assert.equal((await get('/discover?q=anything', runner)).status, 403);
    });
  });

  it('answers 404 for another user’s skill on every endpoint, exactly as for a missing one', async () => {
    const { id } = await stack.api.createSkill(key, skillMd({ name: 'mine-only' }));
    const missingId = '00000000-0000-4000-8000-000000000000';
    const stranger = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'stranger' });
    const endpoints: Array<[string, string, { md?: string }?]> = [
      ['GET', ''],
      ['GET', '?version=1'],
      ['GET', '/export'],
      ['GET', '/bundle'],
      ['POST', '/versions', { md: skillMd({ name: 'mine-only' }) }],
      ['POST', '/activate'],
      ['POST', '/deactivate'],
    ];
    for (const [method, suffix, o] of endpoints) {
      const call = (target: string) =>
        method === 'GET' ? get(`/${target}${suffix}`, stranger) : post(`/${target}${suffix}`, { key: stranger, ...o });
      const [theirs, missing] = [await call(id), await call(missingId)];
      assert.equal(theirs.status, 404, `${method} ${suffix}`);
      assert.deepEqual(theirs.body, missing.body, `${method} ${suffix} says no more than for a missing skill`);
    }
    const found = await get(`/discover?q=${encodeURIComponent('mine-only')}`, stranger);
    assert.deepEqual(found.body.items, []);
    assert.equal((await get(`/${id}`)).body.status, 'active', 'the stranger changed nothing');
  });
});
