import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('GET /missions: filters by status and skill, refuses unknown parameters', () => {
  let stack: TestStack;
  let key: string;
  const ids: Record<'alpha1' | 'beta' | 'alpha2', string> = { alpha1: '', beta: '', alpha2: '' };
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'alpha' }));
    await stack.api.createSkill(key, skillMd({ name: 'beta' }));
    stack.model.enqueue({ reply: { text: 'first' } }, { reply: { text: 'second' } }, { hang: true });
    ids.alpha1 = (await stack.api.startMission(key, { skill: 'alpha', objective: 'One.' })).id;
    await stack.api.waitForEnd(key, ids.alpha1);
    ids.beta = (await stack.api.startMission(key, { skill: 'beta', objective: 'Two.' })).id;
    await stack.api.waitForEnd(key, ids.beta);
    ids.alpha2 = (await stack.api.startMission(key, { skill: 'alpha', objective: 'Three, thinking forever.' })).id;
    await stack.model.waitFor(() => stack.model.requests.length === 3);
  });
  after(() => stack.stop());

  const list = async (query: string) => {
    const res = await stack.api.request('GET', `/api/v1/missions${query}`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { items: Array<{ id: string; status: string }>; nextCursor: string | null };
  };
  const idsOf = (page: { items: Array<{ id: string }> }) => page.items.map((m) => m.id);

  it('lists every mission, newest first, without filters', async () => {
    assert.deepEqual(idsOf(await list('')), [ids.alpha2, ids.beta, ids.alpha1]);
  });

  it('filters by status', async () => {
    assert.deepEqual(idsOf(await list('?status=completed')), [ids.beta, ids.alpha1]);
    assert.deepEqual(idsOf(await list('?status=running')), [ids.alpha2]);
    assert.deepEqual(idsOf(await list('?status=failed')), []);
  });

  it('filters by skill name, and by both', async () => {
    assert.deepEqual(idsOf(await list('?skill=alpha')), [ids.alpha2, ids.alpha1]);
    assert.deepEqual(idsOf(await list('?skill=alpha&status=completed')), [ids.alpha1]);
    assert.deepEqual(idsOf(await list('?skill=gamma')), []);
  });

  it('pages through a filtered list', async () => {
    const first = await list('?status=completed&limit=1');
    assert.deepEqual(idsOf(first), [ids.beta]);
    assert.ok(first.nextCursor);
    const second = await list(`?status=completed&limit=1&cursor=${first.nextCursor}`);
    assert.deepEqual(idsOf(second), [ids.alpha1]);
  });

  it('sees a mission move to cancelled', async () => {
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${ids.alpha2}/cancel`, { key })).status, 202);
    await stack.api.waitForEnd(key, ids.alpha2);
    assert.deepEqual(idsOf(await list('?status=cancelled')), [ids.alpha2]);
    assert.deepEqual(idsOf(await list('?status=running')), []);
  });

  it('answers an unknown query parameter with 400 naming it', async () => {
    const res = await stack.api.request('GET', '/api/v1/missions?state=running', { key });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_failed');
    assert.deepEqual(res.body.error.details.fields, [{ field: 'state', message: 'unknown field' }]);
  });

  it('answers an unknown status with 400 naming status', async () => {
    const res = await stack.api.request('GET', '/api/v1/missions?status=done', { key });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'status');
  });

  it("shows none of another user's missions under any filter", async () => {
    const other = await stack.api.newKey();
    const res = await stack.api.request('GET', '/api/v1/missions?skill=alpha', { key: other });
    assert.deepEqual(res.body.items, []);
  });
});
