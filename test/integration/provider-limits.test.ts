import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { MissionEvent } from '../../contracts/events.ts';
import { ALL_CAPABILITIES, eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildWorker } from '../../wiring/build-worker.ts';
import { openResources, type Resources } from '../../wiring/resources.ts';

// Two targets with limits of their own: the allegro tier's (the shared-limit and accounting tests) and the minuet's
// (the fairness test), so one test's spent minute never slows the other.
const SHARED = 'anthropic:claude-shared';
const FAIR = 'anthropic:claude-fair';
const LIMITS = {
  [SHARED]: { requestsPerMinute: 20, inputTokensPerMinute: 1_000_000, outputTokensPerMinute: 600_000 },
  [FAIR]: { requestsPerMinute: 60 },
};

/** The worker's sample of a metric for a target (0 when absent). */
async function sample(port: number | undefined, name: string, target: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`target="${target}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('provider limits: a per-minute limit every worker shares, waited for durably and fairly', () => {
  let stack: TestStack;
  let second: Resources;
  let secondMetricsPort: number | undefined;
  before(async () => {
    stack = await startTestStack({
      env: {
        ...{ MODEL_TIER_ALLEGRO: 'claude-shared', MODEL_TIER_MINUET: 'claude-fair', PROVIDER_LIMITS: JSON.stringify(LIMITS) },
        // Low enough that the compaction test's second turn reaches it (one-turn missions never compact).
        ...{ CONTEXT_COMPACT_AT_TOKENS: '4000', CONTEXT_KEEP_TURNS: '1' },
      },
    });
    // A second worker process's object graph (its own database pool, Temporal connection and slots) on the same queues.
    second = await openResources(stack.config, { processSignals: false });
    const bundle = process.env.CADENZA_TEST_BUNDLE;
    const worker = await buildWorker(second, {
      temporalAddress: stack.env.TEMPORAL_ADDRESS!,
      env: stack.env,
      ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
    });
    secondMetricsPort = worker.metricsPort;
  });
  after(async () => {
    await second?.shutdown.shutdown('test done');
    await stack?.stop();
  });

  it('two workers sharing a limit of 20 requests per minute send 24 missions through without one 429', async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'quick', maxTurns: 1 }));
    // The provider's own limit is the configured one: anything Cadenza let past it would be refused.
    stack.model.limitRequestsPerMinute(20);
    stack.model.setHandler(() => ({ delayMs: 50, reply: { text: 'done' } }));
    try {
      const ids = await Promise.all(
        Array.from({ length: 24 }, (_, i) => stack.api.startMission(key, { skill: 'quick', objective: `job ${i}` })),
      );
      const ends = await Promise.all(ids.map(({ id }) => stack.api.waitForEnd(key, id)));
      assert.deepEqual(
        ends.map((m) => m.status),
        Array(24).fill('completed'),
      );
      assert.equal(stack.model.rateLimited, 0, 'no request went past the provider limit');
      assert.equal(stack.model.requests.length, 24, 'one request per mission: none retried');
      const events = (await Promise.all(ids.map(async ({ id }) => eventsOf((await stack.api.readEvents(key, id)).frames)))).flat();
      const waits = events.filter((e): e is Extract<MissionEvent, { type: 'provider_wait' }> => e.type === 'provider_wait');
      // The bucket refills one request every 3 s, so how many of the 4 beyond the minute's 20 are refused depends on
      // how quickly the 24 reserve on a loaded machine (a slow start lets a refilled request through unrefused): at
      // least one is, and none reaches the provider past its limit (above).
      assert.ok(waits.length >= 1, `missions beyond the minute's 20 waited (${waits.length} provider_wait events)`);
      assert.ok(waits.every((w) => w.target === SHARED && w.waitMs > 0));
      const counted = await Promise.all(
        [stack.worker!.metricsPort, secondMetricsPort].map((port) => sample(port, 'cadenza_provider_limit_waits_total', SHARED)),
      );
      assert.ok(counted[0]! + counted[1]! >= waits.length, `the workers counted the waits (${counted.join(' + ')})`);
    } finally {
      stack.model.limitRequestsPerMinute(undefined);
      stack.model.setHandler(undefined);
    }
  });

  it('a call reserves its estimate before it is made and settles with the tokens the provider counted', async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'counted', maxTurns: 1 }));
    stack.model.enqueue({ reply: { text: 'counted', usage: { inputTokens: 700, outputTokens: 30 } } });
    const { id } = await stack.api.startMission(key, { skill: 'counted', objective: 'count me' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const call = await sql<Record<string, unknown>>`
      select target, est_input_tokens, est_output_tokens, input_tokens, output_tokens, reserved_at is not null as reserved,
             settled_at is not null as settled
      from provider_calls where mission_id = ${id}`.execute(stack.db);
    assert.deepEqual(call.rows, [
      {
        target: SHARED,
        est_input_tokens: 1_000, // a first call's estimate: no call told the prompt's size yet
        est_output_tokens: stack.config.model.maxTokens, // as the providers estimate output: the call's max_tokens
        input_tokens: 700,
        output_tokens: 30,
        reserved: true,
        settled: true,
      },
    ]);
    // The bucket was full when the call reserved: it now lacks what the call used, not what it reserved.
    const bucket = await sql<{ input_tokens: number; output_tokens: number }>`
      select input_tokens, output_tokens from provider_buckets where target = ${SHARED}`.execute(stack.db);
    assert.deepEqual(bucket.rows[0], { input_tokens: 1_000_000 - 700, output_tokens: 600_000 - 30 });
  });

  it('when the limit is spent, two users take turns: a later user is not served after an earlier backlog', async () => {
    const keyA = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 'fair-a', userId: 'ann' });
    const keyB = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 'fair-b', userId: 'bob' });
    for (const key of [keyA, keyB]) await stack.api.createSkill(key, skillMd({ name: 'turns', maxTurns: 1, model: 'minuet' }));
    // The minute was just spent: one request a second from now on.
    await sql`insert into provider_buckets (target, requests, input_tokens, output_tokens, refilled_at) values (${FAIR}, 0, 0, 0, now())`.execute(
      stack.db,
    );
    const before = stack.model.requests.length;
    const a = await Promise.all(
      Array.from({ length: 6 }, (_, i) => stack.api.startMission(keyA, { skill: 'turns', objective: `ann-${i}` })),
    );
    // Bob asks once Ann's whole backlog is in line.
    const inLine = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from provider_calls where target = ${FAIR}`.execute(stack.db)).rows[0]!.n);
    const deadline = Date.now() + 20_000;
    while ((await inLine()) < 6) {
      assert.ok(Date.now() < deadline, "Ann's six calls never waited in line for their turn");
      await new Promise((ok) => setTimeout(ok, 50));
    }
    const b = await Promise.all(
      Array.from({ length: 2 }, (_, i) => stack.api.startMission(keyB, { skill: 'turns', objective: `bob-${i}` })),
    );
    for (const [key, list] of [
      [keyA, a],
      [keyB, b],
    ] as const)
      for (const { id } of list) assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const order = stack.model.requests.slice(before).map((r) => (r.lastUserText.includes('bob-') ? 'bob' : 'ann'));
    assert.equal(order.length, 8);
    assert.deepEqual(
      order.slice(0, 4).filter((u) => u === 'bob'),
      ['bob', 'bob'],
      `Bob's two calls are among the first four served, alternating with Ann's (order: ${order.join(' ')})`,
    );
  });

  it("a compaction's summary call takes its turn at the limit and settles with what the provider counted", async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'long-read', tools: ['lab.lookup'], maxTurns: 4 }));
    // ~20 KB per result: the second turn's prompt passes CONTEXT_COMPACT_AT_TOKENS, so turn 3 is preceded by a summary.
    stack.tools.on('lookup', () => ({ body: { rows: 'log line · '.repeat(2_000) } }));
    let turns = 0;
    stack.model.setHandler((r) => {
      if (JSON.stringify(r.body).includes('You compact a conversation'))
        return { reply: { text: 'SUMMARY: two lookups of logs.', usage: { inputTokens: 900, outputTokens: 12 } } };
      turns += 1;
      return turns < 3
        ? { reply: { toolUses: [{ id: `tu_long_${turns}`, name: 'lab__lookup', input: { q: `part ${turns}` } }] } }
        : { reply: { text: 'Read it all.' } };
    });
    try {
      const { id } = await stack.api.startMission(key, { skill: 'long-read', objective: 'Read the logs.' });
      assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
      const events = eventsOf((await stack.api.readEvents(key, id)).frames);
      assert.equal(events.filter((e) => e.type === 'context_compacted').length, 1, 'one compaction before turn 3');
      const calls = await sql<{ id: string; input_tokens: number; output_tokens: number; reserved: boolean; settled: boolean }>`
        select id, input_tokens, output_tokens, reserved_at is not null as reserved, settled_at is not null as settled
        from provider_calls where mission_id = ${id} order by reserved_at`.execute(stack.db);
      assert.deepEqual(
        calls.rows.map((c) => c.id.slice(id.length + 1)),
        ['model-1/0', 'model-2/0', 'compact-3/0', 'model-3/0'],
        'each call took its turn, the summary call before the turn it precedes',
      );
      const summary = calls.rows[2]!;
      assert.deepEqual(
        { input: summary.input_tokens, output: summary.output_tokens, reserved: summary.reserved, settled: summary.settled },
        { input: 900, output: 12, reserved: true, settled: true },
      );
    } finally {
      stack.model.setHandler(undefined);
    }
  });
});
