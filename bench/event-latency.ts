import { performance } from 'node:perf_hooks';
import type { TestStack } from '../testkit/test-stack.ts';
import { eventsQuery } from '../contracts/events.ts';
import { startBenchStack, startMission, watchEvents, type BenchStack } from './bench-kit.ts';
import { LOAD_ENV, LOAD_TOOL, loadStep, startBackgroundLoad } from './background-load.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'event-latency';
const MISSIONS = 8;
export const TOOL_TURNS = 4;
// A stream opened on a mission that has just started waits (≤ 1 s) for its first events to be pushed or announced:
// steady state leaves out what was emitted in the first SETTLE_MS after subscribing.
export const SETTLE_MS = 500;
// Random tool durations, so events do not fall in step with anything periodic (heartbeats, the relay's timers).
export const toolDelayMs = () => 200 + Math.round(Math.random() * 600);
const QUERIES = 20;
/** Other missions running while the second set of missions is measured (issue 31). */
const LOAD_CLIENTS = Number(process.env.BENCH_LOAD_CLIENTS ?? 50);

/**
 * Progress latency: an event's `at` (workflow clock, stamped when the workflow emitted it) to the moment an SSE
 * client on the same machine parses its frame. Missions of TOOL_TURNS turns with a slow tool, run one at a time;
 * events emitted before the client was connected are left out. Also the bare round trip of the events query,
 * which the relay pays on every poll.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'stepper', tools: ['lab.lookup'], maxTurns: TOOL_TURNS + 1 }, LOAD_ENV);
  try {
    stack.tools.on('lookup', () => ({ delayMs: toolDelayMs(), body: { ok: true } }));
    stack.model.setHandler((req) =>
      req.toolNames.includes(LOAD_TOOL)
        ? loadStep(req)
        : req.allToolResults.length < TOOL_TURNS
          ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
          : { reply: { text: 'done' } },
    );
    const samples: Sample[] = [];
    for (let i = 0; i < MISSIONS; i++) samples.push(...(await missionLatencies(stack, key, i)));
    const latencies = samples.map((s) => s.latencyMs);
    const steady = samples.filter((s) => s.sinceConnectMs >= SETTLE_MS).map((s) => s.latencyMs);
    log(BENCH, `${latencies.length} events over ${MISSIONS} missions; now with ${LOAD_CLIENTS} other missions running`);
    const load = await startBackgroundLoad(stack, key, LOAD_CLIENTS);
    const loadedSamples: Sample[] = [];
    for (let i = 0; i < MISSIONS; i++) loadedSamples.push(...(await missionLatencies(stack, key, MISSIONS + i)));
    const { completed, perSecond } = await load.stop();
    const loaded = loadedSamples.filter((s) => s.sinceConnectMs >= SETTLE_MS).map((s) => s.latencyMs);
    const queryMs = await queryRoundTrips(stack, key);
    log(BENCH, `${loadedSamples.length} events under load; ${QUERIES} queries`);
    return [
      { bench: BENCH, figure: `emitted → received on SSE (${latencies.length} events): median`, value: fmtMs(median(latencies)) },
      {
        bench: BENCH,
        figure: 'emitted → received on SSE: p95 · max',
        value: `${fmtMs(percentile(latencies, 95))} · ${fmtMs(Math.max(...latencies))}`,
      },
      {
        bench: BENCH,
        figure: `steady state, emitted ≥ ${SETTLE_MS} ms after subscribing (${steady.length} events): median · p95`,
        value: `${fmtMs(median(steady))} · ${fmtMs(percentile(steady, 95))}`,
      },
      {
        bench: BENCH,
        figure: `with ${LOAD_CLIENTS} other missions running (${completed} completed, ${perSecond.toFixed(1)}/s), steady state (${loaded.length} events): median · p95`,
        value: `${fmtMs(median(loaded))} · ${fmtMs(percentile(loaded, 95))}`,
      },
      { bench: BENCH, figure: `events query round trip, mission waiting on a tool (median of ${QUERIES})`, value: fmtMs(median(queryMs)) },
    ];
  } finally {
    await stack.stop();
  }
}

/** One event as the client saw it: emitted → parsed, how long after the stream connected it was emitted, and its name. */
export type Sample = { latencyMs: number; sinceConnectMs: number; missionId: string; seq: number; emittedAt: number };

export async function missionLatencies(stack: BenchStack, key: string, i: number, onStart?: (id: string) => void): Promise<Sample[]> {
  const id = await startMission(stack, key, 'stepper', `events ${i}`);
  onStart?.(id);
  const sse = watchEvents(stack, key, id);
  await sse.done;
  const connectedAt = sse.connectedAt() ?? Number.POSITIVE_INFINITY;
  const expected = 5 * TOOL_TURNS + 3; // status, (turn, tool_start, embed processing, tool_end, embed finished) × turns, turn, status
  if (sse.received.length !== expected) throw new Error(`mission ${id}: ${sse.received.length} events, expected ${expected}`);
  return sse.received
    .map((r) => ({
      latencyMs: r.receivedAt - Date.parse(r.event.at),
      sinceConnectMs: Date.parse(r.event.at) - connectedAt,
      missionId: id,
      seq: r.event.seq,
      emittedAt: Date.parse(r.event.at),
    }))
    .filter((s) => s.sinceConnectMs >= 0);
}

/** Times the events query against a mission that is waiting on a long tool call. */
async function queryRoundTrips(stack: TestStack, key: string): Promise<number[]> {
  stack.tools.on('lookup', () => ({ delayMs: 10_000, body: { ok: true } }));
  const id = await startMission(stack, key, 'stepper', 'queried');
  await stack.tools.request((r) => String(r.headers['idempotency-key'] ?? '').startsWith(`mission-${id}/`));
  const handle = stack.handle(id);
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const t0 = performance.now();
    await handle.query(eventsQuery, 0);
    times.push(performance.now() - t0);
  }
  await handle.cancel();
  return times;
}
