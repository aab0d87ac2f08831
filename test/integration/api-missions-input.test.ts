import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { after, before, describe, it } from 'node:test';
import { insertMissionOnce, listOwnedMissions } from '../../db/missions.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

describe('missions API: input, ownership, idempotency and pagination', () => {
  let stack: TestStack;
  let key: string;
  let other: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'runner' });
    other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'intruder' });
    await stack.api.createSkill(key, skillMd({ name: 'plain', maxTurns: 3 }));
    // The intruder has a skill of the same name: names resolve per owner.
    await stack.api.createSkill(other, skillMd({ name: 'plain' }));
  });
  after(() => stack.stop());

  const post = (body: unknown, k = key) => stack.api.request('POST', '/api/v1/missions', { key: k, body });
  const valid = { skill: 'plain', objective: 'Say something.', workspaceCode: 'ws-1' };
  const fieldsOf = (body: { error: { details: { fields: Array<{ field: string }> } } }) => body.error.details.fields.map((f) => f.field);

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['a missing objective', { skill: 'plain', workspaceCode: 'ws-1' }, 'objective'],
    ['a blank objective', { ...valid, objective: '   ' }, 'objective'],
    ['a missing workspaceCode', { skill: 'plain', objective: 'x' }, 'workspaceCode'],
    ['a missing skill', { objective: 'x', workspaceCode: 'ws-1' }, 'skill'],
    ['maxTurns 0', { ...valid, maxTurns: 0 }, 'maxTurns'],
    ['maxTurns "3" (a string)', { ...valid, maxTurns: '3' }, 'maxTurns'],
    ['maxTurns 2.5', { ...valid, maxTurns: 2.5 }, 'maxTurns'],
    ['an unknown field', { ...valid, priority: 'high' }, 'priority'],
    ['an idempotencyKey that is not a string', { ...valid, idempotencyKey: 7 }, 'idempotencyKey'],
  ];
  for (const [what, body, field] of invalid) {
    it(`answers 400 naming ${field} for ${what}, and starts nothing`, async () => {
      const before = await stack.db
        .selectFrom('missions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      const res = await post(body);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.ok(fieldsOf(res.body).includes(field), `${field} in ${fieldsOf(res.body)}`);
      const after = await stack.db
        .selectFrom('missions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(after.n, before.n);
    });
  }

  it('answers 404 for an unknown skill', async () => {
    const res = await post({ ...valid, skill: 'no-such-skill' });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });

  it('starts a mission: 202 {id, status, links}, and it completes with the model’s answer', async () => {
    const res = await post(valid);
    assert.equal(res.status, 202);
    assert.equal(typeof res.body.id, 'string');
    assert.equal(res.body.status, 'running');
    assert.equal(res.body.links.self, `/api/v1/missions/${res.body.id}`);
    const done = await stack.api.waitForEnd(key, res.body.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.result.text, 'fake answer');
    assert.deepEqual(done.skill, { name: 'plain', version: 1 });
  });

  it('hides another user’s mission: GET, events, cancel and tool cancel all answer 404 as for a missing id', async () => {
    stack.model.enqueue({ reply: { text: 'slow answer' }, delayMs: 1_500 });
    const { id } = await stack.api.startMission(key, { skill: 'plain', objective: 'Mine.' });
    const missingId = randomUUID();
    const probes = [
      ['GET', (m: string) => `/api/v1/missions/${m}`],
      ['GET', (m: string) => `/api/v1/missions/${m}/events`],
      ['POST', (m: string) => `/api/v1/missions/${m}/cancel`],
      ['POST', (m: string) => `/api/v1/missions/${m}/tools/tu_1/cancel`],
    ] as const;
    for (const [method, path] of probes) {
      const theirs = await stack.api.request(method, path(id), { key: other });
      const missing = await stack.api.request(method, path(missingId), { key: other });
      assert.equal(theirs.status, 404, `${method} ${path(id)}`);
      assert.equal(theirs.body.error.code, 'not_found');
      assert.deepEqual(theirs.body, missing.body, `${method} ${path('…')} says no more than for a missing mission`);
    }
    const list = await stack.api.request('GET', '/api/v1/missions', { key: other });
    assert.ok(!list.body.items.some((m: { id: string }) => m.id === id), 'not in the other user’s list');
    const done = await stack.api.waitForEnd(key, id);
    assert.equal(done.status, 'completed', 'the intruder’s cancel did not reach the mission');
  });

  it('gives the same mission for the same idempotencyKey, with one workflow', async () => {
    const body = { ...valid, idempotencyKey: `idem-${randomUUID()}` };
    const first = await post(body);
    const second = await post({ ...body, objective: 'A retry may differ; the key decides.' });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202, 'a repeat answers as the first request did');
    assert.equal(second.body.id, first.body.id);
    await stack.api.waitForEnd(key, first.body.id);
    const third = await post(body);
    assert.equal(third.body.id, first.body.id, 'still the same mission once it has finished');

    const rows = await stack.db.selectFrom('missions').select('id').where('idempotency_key', '=', body.idempotencyKey).execute();
    assert.equal(rows.length, 1);
    const description = await stack.handle(first.body.id).describe();
    assert.equal(description.status.name, 'COMPLETED');
    const runs = await listRuns(first.body.id);
    assert.equal(runs.length, 1, 'one workflow execution');
  });

  it('gives one mission and one workflow when the same idempotencyKey is posted concurrently', async () => {
    const body = { ...valid, idempotencyKey: `race-${randomUUID()}` };
    const results = await Promise.all([1, 2, 3, 4].map(() => post(body)));
    for (const r of results) assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
    const id = results[0]!.body.id as string;
    await stack.api.waitForEnd(key, id);
    assert.equal((await listRuns(id)).length, 1);
  });

  it('keeps idempotency keys per user: another user with the same key gets a mission of their own', async () => {
    const body = { ...valid, idempotencyKey: `shared-${randomUUID()}` };
    const mine = await post(body);
    const theirs = await post(body, other);
    assert.equal(theirs.status, 202);
    assert.notEqual(theirs.body.id, mine.body.id);
    await Promise.all([stack.api.waitForEnd(key, mine.body.id), stack.api.waitForEnd(other, theirs.body.id)]);
  });

  it('lists the caller’s missions newest first, following nextCursor without duplicates or gaps', async () => {
    const lister = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'lister' });
    await stack.api.createSkill(lister, skillMd({ name: 'plain' }));
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await stack.api.startMission(lister, { skill: 'plain', objective: `Mission ${n}` })).id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await stack.api.request('GET', `/api/v1/missions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        key: lister,
      });
      assert.equal(res.status, 200);
      assert.ok(res.body.items.length <= 2);
      seen.push(...res.body.items.map((m: { id: string }) => m.id));
      cursor = res.body.nextCursor;
      pages++;
      assert.ok(pages <= 3, 'pagination ends');
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    const first = await stack.api.request('GET', '/api/v1/missions?limit=2', { key: lister });
    assert.deepEqual(first.body.items[0].skill, { name: 'plain', version: 1 });
    assert.equal(first.body.items[0].objective, 'Mission 3');
    await Promise.all(ids.map((id) => stack.api.waitForEnd(lister, id)));
  });

  it('pages without gaps through missions created in the same instant (microsecond timestamps)', async () => {
    const owner = { tenantId: 'acme', userId: `same-instant-${randomUUID().slice(0, 8)}` };
    const skill = await stack.db
      .selectFrom('skills')
      .select(['id'])
      .where('name', '=', 'plain')
      .where('owner_id', '=', 'runner')
      .executeTakeFirstOrThrow();
    // Same millisecond, different microseconds, and two rows at exactly the same instant.
    const stamps = [
      '2026-01-01T00:00:00.123100Z',
      '2026-01-01T00:00:00.123200Z',
      '2026-01-01T00:00:00.123200Z',
      '2026-01-01T00:00:00.123900Z',
      '2026-01-01T00:00:00.500000Z',
    ];
    const ids: string[] = [];
    for (const at of stamps) {
      const id = randomUUID();
      ids.push(id);
      await insertMissionOnce(stack.db, {
        id,
        tenant_id: owner.tenantId,
        user_id: owner.userId,
        skill_id: skill.id,
        skill_name: 'plain',
        skill_version: 1,
        objective: at,
        workspace_code: 'ws',
        conversation_context: null,
        idempotency_key: null,
        max_turns: 1,
        status: 'completed',
        catalog: null,
        result: null,
        error: null,
        created_at: at,
      });
    }
    const all = await listOwnedMissions(stack.db, owner, { limit: 100 });
    assert.equal(all.length, 5);
    const seen: string[] = [];
    for (let limit = 1; limit <= 3; limit++) {
      seen.length = 0;
      let afterId: string | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await listOwnedMissions(stack.db, owner, { limit, ...(afterId ? { afterId } : {}) });
        seen.push(...rows.map((r) => r.id));
        const last = rows.at(-1);
        if (rows.length < limit || !last) break;
        afterId = last.id;
      }
      assert.deepEqual(
        seen,
        all.map((r) => r.id),
        `pages of ${limit}`,
      );
    }
    // Through the API too, whose cursor carries the same position.
    const lister = await stack.api.newKey(['mission.read'], owner);
    seen.length = 0;
    let cursor: string | null = null;
    do {
      const res = await stack.api.request('GET', `/api/v1/missions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        key: lister,
      });
      seen.push(...res.body.items.map((m: { id: string }) => m.id));
      cursor = res.body.nextCursor;
    } while (cursor && seen.length < 20);
    assert.deepEqual([...seen].sort(), [...ids].sort(), 'every mission exactly once');
  });

  for (const [what, cursor] of [
    ['not base64 JSON', 'abc!!'],
    ['JSON of the wrong shape', Buffer.from('{"a":1}').toString('base64url')],
    ['a bad date', Buffer.from('["yesterday","x"]').toString('base64url')],
    ['null', Buffer.from('null').toString('base64url')],
  ] as const) {
    it(`answers 400 naming cursor for a cursor that is ${what}`, async () => {
      const res = await stack.api.request('GET', `/api/v1/missions?cursor=${encodeURIComponent(cursor)}`, { key });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.deepEqual(fieldsOf(res.body), ['cursor']);
    });
  }

  it('answers 400 naming limit for a limit out of range', async () => {
    for (const limit of ['0', '101', 'ten']) {
      const res = await stack.api.request('GET', `/api/v1/missions?limit=${limit}`, { key });
      assert.equal(res.status, 400, `limit=${limit}`);
      assert.deepEqual(fieldsOf(res.body), ['limit']);
    }
  });

  it('answers 404 to a tool cancel of an unknown toolUseId', async () => {
    const { id } = await stack.api.startMission(key, { skill: 'plain', objective: 'No tools here.' });
    const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_unknown/cancel`, { key });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    await stack.api.waitForEnd(key, id);
    const after = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_unknown/cancel`, { key });
    assert.equal(after.status, 404);
  });

  it('answers 409 to cancelling a mission that has finished, and leaves it completed', async () => {
    const { id } = await stack.api.startMission(key, { skill: 'plain', objective: 'Finish quickly.' });
    const done = await stack.api.waitForEnd(key, id);
    assert.equal(done.status, 'completed');
    const res = await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'conflict');
    assert.equal((await stack.api.getMission(key, id)).body.status, 'completed');
  });

  it('answers 404 for a mission id that does not exist', async () => {
    const res = await stack.api.getMission(key, randomUUID());
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });

  /** The workflow executions with this mission's id, once visibility has recorded the start (within 30 s). */
  async function listRuns(missionId: string) {
    const runs: WorkflowExecutionInfo[] = [];
    await until(
      async () => {
        runs.length = 0;
        for await (const wf of stack.temporal.workflow.list({ query: `WorkflowId = 'mission-${missionId}'` })) runs.push(wf);
        return runs.length > 0;
      },
      { everyMs: 100, what: `a visible workflow for mission ${missionId}` },
    );
    return runs;
  }
});
