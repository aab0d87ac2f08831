import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ALL_CAPABILITIES, eventsOf } from '../../testkit/api-client.ts';
import { until } from '../../testkit/until.ts';
import { createEmptyTestDatabase } from '../../testkit/test-database.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { StatusSearchAttribute } from '../../contracts/mission.ts';

/**
 * Scripts a stack: a mission whose objective names `job-<name>` calls lab.scan on that name, which answers only once
 * the test opens the job's gate; any other mission answers at once.
 */
function script(stack: TestStack) {
  const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
  const gate = (name: string) => {
    if (!gates.has(name)) {
      let open!: () => void;
      const opened = new Promise<void>((ok) => (open = ok));
      gates.set(name, { open, opened });
    }
    return gates.get(name)!;
  };
  stack.tools.on('scan', async (input) => {
    await gate(String(input.target)).opened;
    return { body: { scanned: input.target } };
  });
  stack.model.setHandler((req) => {
    const job = /job-([a-z0-9]+)/.exec(req.lastUserText)?.[1];
    if (job === 'fail') return { status: 400, message: 'the model refuses' };
    if (!job || req.toolResults.length > 0) return { reply: { text: `done ${job ?? ''}` } };
    return { reply: { toolUses: [{ name: 'lab__scan', input: { target: job } }] } };
  });
  return {
    open: (name: string) => gate(name).open(),
    /** The jobs whose scan the tool server received, in arrival order. */
    scanned: () => stack.tools.requests.filter((r) => r.tool === 'scan').map((r) => String(r.input.target)),
    waitScanned: (name: string) =>
      stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.input.target === name)),
  };
}

async function userKey(stack: TestStack, tenantId: string, userId: string): Promise<string> {
  const key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId, userId });
  await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.scan'], maxTurns: 2 }));
  return key;
}

const LIMITS = { MAX_RUNNING_MISSIONS_PER_USER: '2', MAX_RUNNING_MISSIONS_PER_TENANT: '2', MAX_STARTS_PER_MINUTE_PER_USER: '5' };

describe('fair limits: running missions per user and tenant, starts per minute', () => {
  let stack: TestStack;
  let jobs: ReturnType<typeof script>;
  before(async () => {
    stack = await startTestStack({ env: LIMITS });
    jobs = script(stack);
  });
  after(() => stack.stop());

  const start = async (key: string, job: string) =>
    (await stack.api.startMission(key, { skill: 'scanner', objective: `Scan job-${job}.` })) as { id: string; status: string };
  const status = async (key: string, id: string) => (await stack.api.getMission(key, id)).body.status as string;

  it('a mission over the user’s limit is accepted as queued, shown so everywhere, and starts in order when a slot frees', async () => {
    const key = await userKey(stack, 't-order', 'ann');
    const [m1, m2, m3, m4] = [await start(key, 'o1'), await start(key, 'o2'), await start(key, 'o3'), await start(key, 'o4')];
    assert.deepEqual([m1!.status, m2!.status, m3!.status, m4!.status], ['running', 'running', 'queued', 'queued']);
    assert.equal(await status(key, m3!.id), 'queued');
    const listed = await stack.api.request('GET', '/api/v1/missions?status=queued', { key });
    assert.deepEqual(
      listed.body.items.map((m: { id: string }) => m.id),
      [m4!.id, m3!.id],
    );
    const described = await stack.handle(m3!.id).describe();
    assert.equal(described.typedSearchAttributes.get(StatusSearchAttribute), 'queued', 'the Web UI shows it queued');
    await jobs.waitScanned('o2');

    jobs.open('o1');
    await stack.api.waitForEnd(key, m1!.id);
    await jobs.waitScanned('o3');
    assert.equal(await status(key, m3!.id), 'running');
    assert.equal(await status(key, m4!.id), 'queued', 'o4 waits behind o3');
    for (const j of ['o2', 'o3', 'o4']) jobs.open(j);
    for (const m of [m2, m3, m4]) assert.equal((await stack.api.waitForEnd(key, m!.id)).status, 'completed');
    const order = jobs.scanned().filter((j) => j.startsWith('o'));
    assert.deepEqual(order.slice(0, 2).sort(), ['o1', 'o2'], 'the two admitted at once, in either order');
    assert.deepEqual(order.slice(2), ['o3', 'o4'], 'then the queued ones, oldest first');
    assert.equal((await stack.handle(m4!.id).describe()).typedSearchAttributes.get(StatusSearchAttribute), 'completed');
  });

  it('a full tenant’s next slot goes to the user running fewest, and another tenant is never held up by its backlog', async () => {
    const bob = await userKey(stack, 't-fair', 'bob');
    const cat = await userKey(stack, 't-fair', 'cat');
    const dan = await userKey(stack, 't-other', 'dan');
    const b1 = await start(bob, 'f1');
    const b2 = await start(bob, 'f2');
    const b3 = await start(bob, 'f3');
    const c1 = await start(cat, 'f4');
    assert.deepEqual([b1.status, b2.status, b3.status, c1.status], ['running', 'running', 'queued', 'queued']);
    const d1 = await start(dan, 'f5');
    assert.equal(d1.status, 'running', 'tenant t-other has its own slots');
    jobs.open('f5');
    assert.equal((await stack.api.waitForEnd(dan, d1.id)).status, 'completed');

    jobs.open('f1');
    await stack.api.waitForEnd(bob, b1.id);
    // bob still runs one; cat runs none: the slot is cat's although bob's third mission has waited longer.
    await jobs.waitScanned('f4');
    assert.equal(await status(cat, c1.id), 'running');
    assert.equal(await status(bob, b3.id), 'queued');
    for (const j of ['f2', 'f3', 'f4']) jobs.open(j);
    for (const [k, m] of [
      [bob, b2],
      [bob, b3],
      [cat, c1],
    ] as const)
      assert.equal((await stack.api.waitForEnd(k, m.id)).status, 'completed');
  });

  it('a session holds a slot only while an exchange runs: idle frees it at once, and a message waits queued for one', async () => {
    const key = await userKey(stack, 't-session', 'sol');
    const session = (await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan job-s1.', session: true })) as { id: string };
    await start(key, 'a1');
    const b = await start(key, 'b1');
    assert.equal(b.status, 'queued', 'the running exchange and a1 hold both slots');
    await jobs.waitScanned('s1');

    // The exchange answers: the session goes idle and its slot goes to b1 now, not at the queued mission's next
    // periodic check (60 s).
    jobs.open('s1');
    await until(async () => (await status(key, b.id)) === 'running', { timeoutMs: 30_000, what: 'b1 admitted as the session went idle' });
    assert.equal(await status(key, session.id), 'idle');

    // Both slots are a1's and b1's: the message is accepted, and its exchange waits queued until one frees.
    const sent = await stack.api.request('POST', `/api/v1/missions/${session.id}/messages`, { key, body: { text: 'Scan job-s2.' } });
    assert.equal(sent.status, 202);
    await until(async () => (await status(key, session.id)) === 'queued', { timeoutMs: 30_000, what: 'the session queued' });
    assert.ok(!jobs.scanned().includes('s2'), 'the queued exchange has not run');

    jobs.open('a1');
    await jobs.waitScanned('s2');
    jobs.open('s2');
    await until(async () => (await stack.api.getMission(key, session.id)).body.exchanges?.length === 2, { timeoutMs: 30_000 });
    jobs.open('b1');
    await stack.api.request('POST', `/api/v1/missions/${session.id}/close`, { key });
    assert.equal((await stack.api.waitForEnd(key, session.id)).status, 'completed');
    const statuses = eventsOf((await stack.api.readEvents(key, session.id)).frames).flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.deepEqual(statuses, ['running', 'idle', 'queued', 'running', 'idle', 'completed'], 'the stream says the exchange waited');
    await stack.api.waitForEnd(key, b.id);
  });

  it('a cancelled queued mission ends cancelled and never runs', async () => {
    const key = await userKey(stack, 't-cancel', 'eve');
    const [e1, e2, e3] = [await start(key, 'c1'), await start(key, 'c2'), await start(key, 'c3')];
    assert.equal(e3.status, 'queued');
    const res = await stack.api.request('POST', `/api/v1/missions/${e3.id}/cancel`, { key });
    assert.equal(res.status, 202);
    assert.equal((await stack.api.waitForEnd(key, e3.id)).status, 'cancelled');
    jobs.open('c1');
    jobs.open('c2');
    for (const m of [e1, e2]) assert.equal((await stack.api.waitForEnd(key, m.id)).status, 'completed');
    assert.ok(!jobs.scanned().includes('c3'));
  });

  it('a retry of a failed mission waits for a slot like any start', async () => {
    const key = await userKey(stack, 't-retry', 'ike');
    const failed = await start(key, 'fail');
    assert.equal((await stack.api.waitForEnd(key, failed.id)).status, 'failed');
    const [r1, r2] = [await start(key, 'y1'), await start(key, 'y2')];
    const retry = await stack.api.request('POST', `/api/v1/missions/${failed.id}/retry`, { key, body: {} });
    assert.equal(retry.status, 202);
    assert.equal(retry.body.status, 'queued');
    assert.equal(await status(key, retry.body.id), 'queued');
    jobs.open('y1');
    await stack.api.waitForEnd(key, r1.id);
    assert.equal((await stack.api.waitForEnd(key, retry.body.id)).status, 'failed', 'it ran (and the model refused again)');
    jobs.open('y2');
    assert.equal((await stack.api.waitForEnd(key, r2.id)).status, 'completed');
  });

  it('starts beyond MAX_STARTS_PER_MINUTE_PER_USER answer 429 with Retry-After; a repeated idempotency key is no new start', async () => {
    const key = await userKey(stack, 't-rate', 'fay');
    const first = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'scanner', objective: 'Quick.', workspaceCode: 'ws-1', idempotencyKey: 'k1' },
    });
    assert.equal(first.status, 202);
    for (let i = 0; i < 4; i++) await stack.api.startMission(key, { skill: 'scanner', objective: `Quick ${i}.` });
    const refused = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'scanner', objective: 'One more.', workspaceCode: 'ws-1' },
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    const again = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'scanner', objective: 'Quick.', workspaceCode: 'ws-1', idempotencyKey: 'k1' },
    });
    assert.equal(again.status, 202);
    assert.equal(again.body.id, first.body.id);
    // A retry is a start: refused the same way (tested below).
    // Another user of the same tenant has a budget of their own.
    const other = await userKey(stack, 't-rate', 'gil');
    assert.equal(
      (
        await stack.api.request('POST', '/api/v1/missions', {
          key: other,
          body: { skill: 'scanner', objective: 'Mine.', workspaceCode: 'ws-1' },
        })
      ).status,
      202,
    );
  });

  it('a retry counts against MAX_STARTS_PER_MINUTE_PER_USER: the same 429 as a new start, nothing written, and it can be sent again', async () => {
    const key = await userKey(stack, 't-rate-retry', 'hoa');
    const failed = await start(key, 'fail');
    assert.equal((await stack.api.waitForEnd(key, failed.id)).status, 'failed');
    for (let i = 0; i < 4; i++) await stack.api.startMission(key, { skill: 'scanner', objective: `Quick ${i}.` });
    const missions = () =>
      stack.db
        .selectFrom('missions')
        .select(['id', 'retry_of'])
        .where('tenant_id', '=', 't-rate-retry')
        .where('user_id', '=', 'hoa')
        .execute();
    assert.equal((await missions()).length, 5);

    const fresh = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'scanner', objective: 'More.', workspaceCode: 'ws' },
    });
    const retry = await stack.api.request('POST', `/api/v1/missions/${failed.id}/retry`, { key, body: {} });
    assert.equal(fresh.status, 429);
    assert.equal(retry.status, 429, JSON.stringify(retry.body));
    assert.equal(retry.body.error.code, fresh.body.error.code);
    assert.match(retry.body.error.message, /mission starts in a minute/);
    const retryAfter = Number(retry.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal((await missions()).length, 5, 'the refused retry wrote no mission');

    // The window moves on (aged here rather than waited for): the same retry is accepted, once, and runs.
    await sql`update missions set created_at = now() - interval '2 minutes' where tenant_id = 't-rate-retry'`.execute(stack.db);
    const accepted = await stack.api.request('POST', `/api/v1/missions/${failed.id}/retry`, { key, body: {} });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.deepEqual(
      (await missions()).filter((m) => m.retry_of === failed.id).map((m) => m.id),
      [accepted.body.id],
    );
    assert.equal((await stack.api.waitForEnd(key, accepted.body.id)).status, 'failed', 'it ran (and the model refused again)');
  });
});

describe('fair limits survive an API and a worker restart', () => {
  it('a queued mission stays queued across the restart and starts when the running one ends on the new worker', async () => {
    const database = await createEmptyTestDatabase();
    const env = { ...LIMITS, MAX_RUNNING_MISSIONS_PER_USER: '1', TEMPORAL_TASK_QUEUE: `test-restart-${Date.now().toString(36)}` };
    const first = await startTestStack({ env, databaseUrl: database.url });
    let second: TestStack | undefined;
    try {
      script(first);
      const key = await userKey(first, 't-restart', 'hal');
      const a = (await first.api.startMission(key, { skill: 'scanner', objective: 'Scan job-r1.' })) as { id: string; status: string };
      const b = (await first.api.startMission(key, { skill: 'scanner', objective: 'Scan job-r2.' })) as { id: string; status: string };
      assert.deepEqual([a.status, b.status], ['running', 'queued']);
      await first.tools.waitFor(() => first.tools.requests.length === 1);
      await first.stop(); // the API and the worker go away while r1's tool call is in flight

      second = await startTestStack({ env, databaseUrl: database.url });
      const jobs = script(second);
      assert.equal((await second.api.getMission(key, b.id)).body.status, 'queued');
      await jobs.waitScanned('r1'); // the tool call, retried on the new worker
      assert.equal((await second.api.getMission(key, b.id)).body.status, 'queued', 'the limit holds after the restart');
      jobs.open('r1');
      jobs.open('r2');
      assert.equal((await second.api.waitForEnd(key, a.id)).status, 'completed');
      assert.equal((await second.api.waitForEnd(key, b.id)).status, 'completed');
      const r1 = second.tools.requests.find((r) => r.input.target === 'r1')!;
      const r2 = second.tools.requests.find((r) => r.input.target === 'r2')!;
      assert.ok(r2.startedAt >= r1.endedAt!, 'r2 ran only after r1 had finished');
    } finally {
      await second?.stop();
      await database.drop();
    }
  });
});
