import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { sql } from 'kysely';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

const { EventType } = proto.temporal.api.enums.v1;

describe('worker processes killed mid-mission (SIGKILL)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'survivor', tools: ['lab.report', 'lab.lookup', 'lab.quick'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  const feedOf = (id: string) =>
    stack.db.selectFrom('feed').select(['kind', 'tool_use_id', 'outcome']).where('mission_id', '=', id).orderBy('id').execute();

  it('a worker’s death is not a tool error: the interrupted call runs again, once, on the next worker, though the tool has no retries', async () => {
    let reports = 0;
    stack.tools.on('report', () => (++reports === 1 ? { hang: true } : { body: { found: 'after restart' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_k', name: 'lab__report', input: { size: 1 } }] } },
      { reply: { text: 'survived' } },
    );
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'survivor', objective: 'Survive a crash.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'report'));

    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'survived');
      assert.deepEqual(
        mission.tools.map((t: { status: string }) => t.status),
        ['completed'],
      );
      const calls = stack.tools.requests.filter((r) => r.tool === 'report');
      assert.equal(calls.length, 2, 'one call cut off by the crash, then exactly one on the next worker');
      assert.equal(calls[0]!.headers['idempotency-key'], calls[1]!.headers['idempotency-key']);
      assert.equal(calls[0]!.headers['idempotency-key'], `mission-${id}/tu_k`);
      const row = await stack.db.selectFrom('tool_calls').selectAll().where('mission_id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.attempt, 2);
      const result = stack.model.requests.at(-1)!.toolResults[0]!;
      assert.ok(!result.isError, 'the model sees the answer, not the death');
      assert.match(result.content, /after restart/);
      const embeds = await stack.db.selectFrom('embeds').selectAll().where('mission_id', '=', id).execute();
      assert.equal(embeds.length, 1, 'the retried attempt leaves one embed');
      assert.equal(embeds[0]!.id, mission.tools[0].embedId);
      assert.deepEqual([embeds[0]!.status, embeds[0]!.attempt, embeds[0]!.result], ['finished', 2, { found: 'after restart' }]);
    } finally {
      await second.kill('SIGTERM');
    }
  });

  it('a retried attempt returns the answer the tool already gave: the tool is not called again', async () => {
    // The attempt's end statement (output, embed end and feed row together) is held inside Postgres by a trigger
    // waiting on a lock the test holds; the worker dies meanwhile, and the statement commits once the lock goes: the
    // answer is stored, its attempt never reported.
    await sql`create function hold_tool_end() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(4242); return new; end $$`.execute(stack.db);
    await sql`create trigger hold_tool_end before insert on tool_calls for each row execute function hold_tool_end()`.execute(stack.db);
    let release!: () => void;
    const released = new Promise<void>((ok) => (release = ok));
    let locked!: () => void;
    const isLocked = new Promise<void>((ok) => (locked = ok));
    const lock = stack.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(4242)`.execute(trx);
      locked();
      await released;
    });
    await isLocked;
    try {
      stack.tools.on('lookup', () => ({ body: { hit: 'answered once' } }));
      stack.model.enqueue(
        { reply: { toolUses: [{ id: 'tu_once', name: 'lab__lookup', input: { q: 'x' } }] } },
        { reply: { text: 'kept' } },
      );
      const first = await spawnWorker(stack.env);
      const { id } = await stack.api.startMission(key, { skill: 'survivor', objective: 'Answer once.' });
      const waiting = async () =>
        // Only this test's lock (key 4242: objid, objsubid 1 for a bigint key): admission's own advisory locks wait
        // too at times, and taking one of theirs for the held statement killed the worker before it had sent it.
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_locks
            where locktype = 'advisory' and objid = 4242 and objsubid = 1 and not granted`.execute(stack.db)
        ).rows[0]!.n > 0;
      await until(waiting, { timeoutMs: 60_000, what: 'the end statement held by the lock' });
      await first.kill('SIGKILL');
      release();
      await lock;
      const stored = () => stack.db.selectFrom('tool_calls').selectAll().where('mission_id', '=', id).executeTakeFirst();
      await until(async () => (await stored()) !== undefined, { timeoutMs: 30_000, what: 'the held statement committed' });
      const second = await spawnWorker(stack.env);
      try {
        const mission = await stack.api.waitForEnd(key, id);
        assert.equal(mission.status, 'completed');
        assert.equal(stack.tools.requests.filter((r) => r.tool === 'lookup').length, 1, 'the tool answered once and was not called again');
        assert.equal((await stored())!.attempt, 1, 'the stored answer is the first attempt’s');
        assert.match(stack.model.requests.at(-1)!.toolResults[0]!.content, /answered once/);
        const ends = (await feedOf(id)).filter((f) => f.kind === 'tool_end');
        assert.deepEqual(ends, [{ kind: 'tool_end', tool_use_id: 'tu_once', outcome: 'completed' }]);
      } finally {
        await second.kill('SIGTERM');
      }
    } finally {
      release();
      await lock;
      await sql`drop trigger if exists hold_tool_end on tool_calls`.execute(stack.db);
    }
  });

  it('a call whose every attempt dies ends as an error once its bound passes, and the feed gets its end exactly once', async () => {
    // Each attempt's worker is killed the moment it calls the tool, until the call's overall bound has passed. The
    // child is known from its spawn: a new worker may pick the waiting attempt up before it says it is running.
    let current: ChildProcess | undefined;
    let worker: Awaited<ReturnType<typeof spawnWorker>> | undefined;
    // A worker killed before it says it is running fails to spawn: the loop below starts another.
    const respawn = async () => void (worker = await spawnWorker(stack.env, (child) => (current = child)).catch(() => undefined));
    const dead = () => !current || current.exitCode !== null || current.signalCode !== null;
    let kills = 0;
    stack.tools.on('quick', () => {
      kills += 1;
      current?.kill('SIGKILL');
      return { hang: true };
    });
    await respawn();
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_dies', name: 'lab__quick', input: { target: 'x' } }] } },
      { reply: { text: 'coped' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'survivor', objective: 'Die every time.' });
    const timedOut = async () =>
      (await stack.handle(id).fetchHistory()).events!.some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
    while (!(await timedOut())) {
      if (dead()) await respawn();
      await until(async () => dead() || (await timedOut()), { timeoutMs: 90_000, everyMs: 250, what: 'a dead worker or the timeout' });
    }
    while (dead()) await respawn();
    try {
      assert.ok(kills >= 1, 'at least one attempt died');
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.deepEqual(
        mission.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]),
        [['tu_dies', 'error']],
      );
      assert.ok(stack.model.requests.at(-1)!.toolResults[0]!.isError, 'the model sees the call failed');
      const rows = (await feedOf(id)).filter((f) => f.tool_use_id === 'tu_dies');
      assert.deepEqual(rows, [
        { kind: 'tool_start', tool_use_id: 'tu_dies', outcome: null },
        { kind: 'tool_end', tool_use_id: 'tu_dies', outcome: 'error' },
      ]);
    } finally {
      await worker?.kill('SIGTERM');
    }
  });
});
