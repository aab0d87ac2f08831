import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('profile, memories, integrations and activity over HTTP', () => {
  let stack: TestStack;
  let ada: string;
  let bob: string;
  before(async () => {
    stack = await startTestStack();
    ada = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ada' });
    bob = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'bob' });
  });
  after(() => stack.stop());
  const req = (method: string, path: string, key: string, body?: unknown) =>
    stack.api.request(method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });
  const fieldsOf = (res: { body: { error: { details: { fields: Array<{ field: string }> } } } }) =>
    res.body.error.details.fields.map((f) => f.field);

  it('keeps a profile per user: empty until PUT, replaced whole, validated per field', async () => {
    assert.deepEqual((await req('GET', '/profile', ada)).body, {
      company: null,
      role: null,
      brandVoice: null,
      preferences: {},
      updatedAt: null,
    });
    const put = await req('PUT', '/profile', ada, { company: 'Fernhill', role: 'CMO', preferences: { tone: 'warm', maxPages: 1 } });
    assert.equal(put.status, 200);
    assert.equal((await req('GET', '/profile', ada)).body.company, 'Fernhill');
    assert.equal((await req('GET', '/profile', bob)).body.company, null, "another user's profile is not shared");
    await req('PUT', '/profile', ada, { role: 'CEO' });
    const after = (await req('GET', '/profile', ada)).body;
    assert.equal(after.company, null, 'a PUT replaces the whole profile');
    assert.equal(after.role, 'CEO');

    const bad = await req('PUT', '/profile', ada, { company: '', brandVoice: 7, preferences: { x: { nested: true } }, extra: 1 });
    assert.equal(bad.status, 400);
    assert.deepEqual(fieldsOf(bad).sort(), ['brandVoice', 'company', 'extra', 'preferences.x']);
  });

  it('adds, lists newest first with a cursor, searches and deletes memories; another user sees none and gets 404', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await req('POST', '/memories', ada, {
        content: `Fact number ${i} about the roastery.`,
        workspaceCode: 'ws-a',
        tags: ['fact'],
      });
      assert.equal(res.status, 201);
      ids.push(res.body.id);
    }
    const page1 = await req('GET', '/memories?limit=3', ada);
    assert.deepEqual(
      page1.body.items.map((m: { id: string }) => m.id),
      ids.slice(2).reverse(),
    );
    const page2 = await req('GET', `/memories?limit=3&cursor=${page1.body.nextCursor}`, ada);
    assert.deepEqual(
      page2.body.items.map((m: { id: string }) => m.id),
      ids.slice(0, 2).reverse(),
    );
    assert.equal(page2.body.nextCursor, null);

    await req('POST', '/memories', ada, { content: 'Marlowe Hotels renew their coffee contract every September.' });
    const found = await req('GET', '/memories?q=when%20does%20Marlowe%20renew', ada);
    assert.equal(found.status, 200);
    assert.match(found.body.items[0].content, /Marlowe/);
    assert.deepEqual((await req('GET', '/memories?q=Marlowe', bob)).body.items, [], "a search never reaches another user's memories");
    assert.deepEqual((await req('GET', '/memories', bob)).body.items, []);

    assert.equal((await req('DELETE', `/memories/${ids[0]}`, bob)).status, 404, "another user's memory answers as a missing one");
    assert.equal((await req('DELETE', '/memories/no-such-id', ada)).status, 404);
    assert.equal((await req('DELETE', `/memories/${ids[0]}`, ada)).status, 204);
    assert.equal((await req('DELETE', `/memories/${ids[0]}`, ada)).status, 404);

    const bad = await req('POST', '/memories', ada, { content: '  ', tags: ['x'.repeat(65)] });
    assert.equal(bad.status, 400);
    assert.deepEqual(fieldsOf(bad).sort(), ['content', 'tags.0']);
    assert.deepEqual(fieldsOf(await req('GET', '/memories?limit=0', ada)), ['limit']);
    assert.deepEqual(fieldsOf(await req('GET', '/memories?cursor=garbage', ada)), ['cursor']);
  });

  it('connects, lists and disconnects integrations per user, validating the provider and status', async () => {
    assert.equal((await req('POST', '/integrations', ada, { provider: 'google' })).status, 201);
    assert.equal((await req('POST', '/integrations', ada, { provider: 'google', status: 'inactive' })).status, 200);
    assert.deepEqual(
      (await req('GET', '/integrations', ada)).body.items.map((i: { provider: string; status: string }) => [i.provider, i.status]),
      [['google', 'inactive']],
    );
    assert.deepEqual((await req('GET', '/integrations', bob)).body.items, []);
    assert.equal((await req('DELETE', '/integrations/google', bob)).status, 404);
    assert.equal((await req('DELETE', '/integrations/google', ada)).status, 204);
    const bad = await req('POST', '/integrations', ada, { provider: 'Not A Provider', status: 'pending' });
    assert.equal(bad.status, 400);
    assert.deepEqual(fieldsOf(bad).sort(), ['provider', 'status']);
  });

  it('pages the activity feed newest first and shows each user only their own', async () => {
    await stack.api.createSkill(ada, skillMd({ name: 'feeder', tools: ['lab.lookup'], maxTurns: 3 }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_1', name: 'lab__lookup', input: { q: 'a' } },
            { id: 'tu_2', name: 'lab__lookup', input: { q: 'b' } },
          ],
        },
      },
      { reply: { text: 'fed' } },
    );
    const { id } = await stack.api.startMission(ada, { skill: 'feeder', objective: 'Feed the feed.' });
    await stack.api.waitForEnd(ada, id);

    const all = (await req('GET', '/activity', ada)).body.items;
    assert.equal(all.length, 5, 'two tool starts, two tool ends, one mission end');
    assert.equal(all[0].kind, 'mission_end');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: Array<{ id: string }>; nextCursor: string | null } } = await req(
        'GET',
        `/activity?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        ada,
      );
      seen.push(...page.body.items.map((a) => a.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.map((a: { id: string }) => a.id),
      'pages join up to the whole feed, without gaps or repeats',
    );
    assert.deepEqual((await req('GET', '/activity', bob)).body.items, []);
    assert.deepEqual((await req('GET', `/activity?missionId=${id}`, bob)).body.items, []);
    assert.deepEqual(fieldsOf(await req('GET', '/activity?cursor=zzz', ada)), ['cursor']);
  });

  it('needs mission.read to read and mission.run to change context', async () => {
    const reader = await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'ada' });
    assert.equal((await req('GET', '/memories', reader)).status, 200);
    assert.equal((await req('GET', '/activity', reader)).status, 200);
    assert.equal((await req('POST', '/memories', reader, { content: 'x' })).status, 403);
    assert.equal((await req('PUT', '/profile', reader, {})).status, 403);
    assert.equal((await req('POST', '/integrations', reader, { provider: 'google' })).status, 403);
    assert.equal((await stack.api.request('GET', '/api/v1/profile')).status, 401);
  });
});
