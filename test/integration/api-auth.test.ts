import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hashApiKey, revokeApiKey } from '../../db/api-keys.ts';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('API authentication and capabilities', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack.stop());

  const get = (path: string, headers: Record<string, string> = {}) => stack.api.request('GET', path, { headers });
  const issue = (body: unknown, key = stack.config.adminKey) =>
    stack.api.request('POST', '/api/v1/admin/keys', { ...(key ? { key } : {}), body });

  it('answers 401 with the error shape when there is no Authorization header', async () => {
    const res = await get('/api/v1/missions');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="cadenza"', 'the scheme the API wants (RFC 6750)');
    assert.equal(typeof res.body.error.message, 'string');
    assert.ok(res.body.error.message.length > 0);
  });

  for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer two words', 'cdz_notbearer', 'Token abc']) {
    it(`answers 401 to the malformed Authorization header ${JSON.stringify(header)}`, async () => {
      const res = await get('/api/v1/skills', { authorization: header });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    });
  }

  it('answers 401 to an unknown key', async () => {
    const res = await get('/api/v1/skills', { authorization: 'Bearer cdz_this-key-was-never-issued' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  it('accepts the scheme name in any case', async () => {
    const key = await stack.api.newKey();
    const res = await get('/api/v1/skills', { authorization: `bearer ${key}` });
    assert.equal(res.status, 200);
  });

  it('answers 401 to a key once it is revoked', async () => {
    const created = await issue({ tenantId: 'acme', userId: 'revokee', capabilities: ['skill.read'] });
    assert.equal(created.status, 201);
    const key = created.body.key as string;
    assert.equal((await stack.api.request('GET', '/api/v1/skills', { key })).status, 200);

    await revokeApiKey(stack.db, created.body.id);
    const res = await stack.api.request('GET', '/api/v1/skills', { key });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  it("answers a start by its key first, then by the skill it names: 401, 403, 400, then 404 for a skill that is another user's", async () => {
    const ann = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 'acme', userId: 'ann' });
    await stack.api.createSkill(ann, skillMd({ name: 'anns-skill' }));
    const start = (key: string, body: Record<string, unknown>) => stack.api.request('POST', '/api/v1/missions', { key, body });
    const valid = { skill: 'anns-skill', objective: 'x', workspaceCode: 'ws' };

    const revoked = await issue({ tenantId: 'acme', userId: 'ann', capabilities: ['mission.run'] });
    await revokeApiKey(stack.db, revoked.body.id);
    assert.equal((await start(revoked.body.key as string, valid)).status, 401, "a revoked key of the skill's owner");
    assert.equal((await start('cdz_this-key-was-never-issued', valid)).status, 401);
    assert.equal((await start(await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'ann' }), valid)).status, 403);
    const invalid = await start(ann, { skill: 'anns-skill', objective: '', workspaceCode: 'ws' });
    assert.equal(invalid.status, 400, JSON.stringify(invalid.body));
    // Bob, same tenant: Ann's skill is not his, and the answer does not say it exists.
    const bob = await start(await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 'acme', userId: 'bob' }), valid);
    assert.equal(bob.status, 404, JSON.stringify(bob.body));
    const none = await start(ann, { ...valid, skill: 'no-such-skill' });
    assert.equal(none.status, 404);
    assert.equal(bob.body.error.message, none.body.error.message.replace('no-such-skill', 'anns-skill'), 'the same answer as for no skill');
    // The name is trimmed as the body's check trims it: the same skill, whose mission starts and ends.
    stack.model.enqueue({ reply: { text: 'done' } });
    const started = await start(ann, { ...valid, skill: '  anns-skill ' });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.deepEqual(started.body.skill, { name: 'anns-skill', version: 1 });
    assert.equal((await stack.api.waitForEnd(ann, started.body.id as string)).status, 'completed');
  });

  it('answers 403 naming mission.run when a read-only key starts a mission', async () => {
    const key = await stack.api.newKey(['mission.read']);
    const res = await stack.api.request('POST', '/api/v1/missions', { key, body: { skill: 'any', objective: 'x', workspaceCode: 'ws' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
    assert.match(res.body.error.message, /mission\.run/);
    assert.equal((await stack.api.request('GET', '/api/v1/missions', { key })).status, 200, 'the capability it has still works');
  });

  it('answers 403 naming skill.write when a key without it creates a skill', async () => {
    const key = await stack.api.newKey(['skill.read', 'mission.run', 'mission.read']);
    const res = await stack.api.request('POST', '/api/v1/skills', {
      key,
      raw: skillMd({ name: 'nope' }),
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
    assert.match(res.body.error.message, /skill\.write/);
    const rows = await stack.db.selectFrom('skills').select('id').where('name', '=', 'nope').execute();
    assert.deepEqual(rows, [], 'nothing was stored');
  });

  it('answers 403 naming mission.read and skill.read to a key lacking them', async () => {
    const key = await stack.api.newKey(['skill.write']);
    const missions = await stack.api.request('GET', '/api/v1/missions', { key });
    assert.equal(missions.status, 403);
    assert.match(missions.body.error.message, /mission\.read/);
    const skills = await stack.api.request('GET', '/api/v1/skills', { key });
    assert.equal(skills.status, 403);
    assert.match(skills.body.error.message, /skill\.read/);
  });

  it('stores keys only as their sha256 hash, never in plain text', async () => {
    const created = await issue({ tenantId: 'acme', userId: 'hashed', capabilities: ['skill.read'] });
    const key = created.body.key as string;
    const row = await stack.db.selectFrom('api_keys').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!JSON.stringify(value ?? null).includes(key), `column ${column} does not hold the plain key`);
    }
    const expected = createHash('sha256').update(key).digest('hex');
    assert.equal(row.key_hash, expected);
    assert.equal(hashApiKey(key), expected);
  });
});

describe('admin API: issuing keys', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack.stop());

  const issue = (body: unknown, key?: string) => stack.api.request('POST', '/api/v1/admin/keys', { ...(key ? { key } : {}), body });
  const valid = { tenantId: 'acme', userId: 'alice', capabilities: ['skill.read'] };

  it('answers 401 without a key and with a wrong admin key', async () => {
    const none = await issue(valid);
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthorized');
    const wrong = await issue(valid, `${stack.config.adminKey}x`);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'unauthorized');
    const short = await issue(valid, 'adm_short');
    assert.equal(short.status, 401);
  });

  it('does not take an ordinary API key, even one with every capability, as the admin key', async () => {
    const key = await stack.api.newKey(ALL_CAPABILITIES);
    const res = await issue(valid, key);
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  it('answers 400 naming an unknown capability', async () => {
    const res = await issue({ ...valid, capabilities: ['skill.read', 'root'] }, stack.config.adminKey);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_failed');
    const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
    assert.ok(
      fields.some((f: string) => f.startsWith('capabilities')),
      `fields name capabilities: ${fields}`,
    );
  });

  it('answers 400 naming a missing tenantId and an empty capability list', async () => {
    const res = await issue({ userId: 'alice', capabilities: [] }, stack.config.adminKey);
    assert.equal(res.status, 400);
    const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
    assert.ok(fields.includes('tenantId'), `fields: ${fields}`);
    assert.ok(fields.includes('capabilities'), `fields: ${fields}`);
  });

  it('answers 400 naming an extra field', async () => {
    const res = await issue({ ...valid, admin: true }, stack.config.adminKey);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_failed');
    const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
    assert.ok(fields.includes('admin'), `fields: ${fields}`);
  });

  it('issues a key that works at once, with exactly the capabilities asked for', async () => {
    const res = await issue({ tenantId: 'acme', userId: 'bob', capabilities: ['skill.read', 'skill.write'] }, stack.config.adminKey);
    assert.equal(res.status, 201);
    assert.equal(typeof res.body.key, 'string');
    const key = res.body.key as string;
    const created = await stack.api.request('POST', '/api/v1/skills', {
      key,
      raw: skillMd({ name: 'bobs-skill' }),
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(created.status, 201);
    assert.equal((await stack.api.request('GET', '/api/v1/skills', { key })).status, 200);
    assert.equal((await stack.api.request('GET', '/api/v1/missions', { key })).status, 403);
  });

  it('issues a different key on every call', async () => {
    const [a, b] = await Promise.all([issue(valid, stack.config.adminKey), issue(valid, stack.config.adminKey)]);
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.notEqual(a.body.key, b.body.key);
  });
});
