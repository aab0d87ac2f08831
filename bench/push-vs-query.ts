import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { TestStack } from '../testkit/test-stack.ts';
import { startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { cpuMeter, formatCores, type CpuUse } from './cpu.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'push-vs-query';
// A model with a realistic latency: each call answers after 300–800 ms (uniform).
const modelDelayMs = () => 300 + Math.round(Math.random() * 500);
const toolDelayMs = () => 200 + Math.round(Math.random() * 600);
const ROUNDS = 2; // each path runs this many times, alternating, so drift in the machine's load falls on both
const LATENCY_MISSIONS = 8; // watched, all at once, TOOL_TURNS tool turns each
const TOOL_TURNS = 4;
// Closed loops of one-tool missions: 10 in flight leaves the two cores of this machine room, 50 saturates them.
const LEVELS = [
  { concurrency: 10, missions: 60 },
  { concurrency: 50, missions: 150 },
] as const;

type Mode = 'push' | 'query';
type Tally = { latencies: number[]; levels: Array<{ watched: Level[]; unwatched: Level[] }> };
type Level = { missions: number; elapsedMs: number; cpu: CpuUse; queries: number; pushed: number };

/**
 * The two ways the worker's events reach the API's relay, with a model of realistic latency: `push` (events pushed in
 * the NOTIFY once an activity's start proves them recorded, the relay asks no query) and `query` (every event announced
 * by a wake-up naming its seq, the relay reads it by the workflow's events query). Same code: the stack's
 * `pushEvents: false` selects the second. Figures: events → SSE latency, missions/s watched and unwatched, and the
 * CPU of the bench process (API and worker: the query costs both) and of Temporal, per mission.
 */
export async function run(): Promise<Row[]> {
  const tallies: Record<Mode, Tally> = {
    push: { latencies: [], levels: LEVELS.map(() => ({ watched: [], unwatched: [] })) },
    query: { latencies: [], levels: LEVELS.map(() => ({ watched: [], unwatched: [] })) },
  };
  for (let round = 0; round < ROUNDS; round++)
    for (const mode of ['push', 'query'] as const) {
      await measure(tallies[mode], mode, round);
    }
  return (['push', 'query'] as const).flatMap((mode) => rows(mode, tallies[mode]));
}

async function measure(t: Tally, mode: Mode, round: number): Promise<void> {
  const { stack, key } = await startBenchStack(
    { name: 'paced', tools: ['lab.lookup'], maxTurns: TOOL_TURNS + 1 },
    { MODEL_CONCURRENCY: '50' },
    mode === 'query' ? { pushEvents: false } : {},
  );
  try {
    let toolTurns = TOOL_TURNS;
    stack.tools.on('lookup', () => ({ delayMs: toolDelayMs(), body: { ok: true } }));
    stack.model.setHandler((req) => ({
      delayMs: modelDelayMs(),
      reply: req.allToolResults.length < toolTurns ? { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } : { text: 'done' },
    }));
    await level(stack, key, 4, 4, true); // warm-up
    const latencies = await Promise.all(Array.from({ length: LATENCY_MISSIONS }, (_, i) => missionLatencies(stack, key, i)));
    t.latencies.push(...latencies.flat());
    toolTurns = 1;
    stack.tools.on('lookup', () => ({ body: { ok: true } }));
    for (const [i, { concurrency, missions }] of LEVELS.entries()) {
      t.levels[i]!.unwatched.push(await level(stack, key, concurrency, missions, false));
      t.levels[i]!.watched.push(await level(stack, key, concurrency, missions, true));
    }
    log(BENCH, `${mode}, round ${round + 1}: done`);
  } finally {
    await stack.stop();
  }
}

/** Each event's workflow clock at emission → the SSE client parsed its frame; events before the client connected left out. */
async function missionLatencies(stack: TestStack, key: string, i: number): Promise<number[]> {
  const id = await startMission(stack, key, 'paced', `paced ${i}`);
  const sse = watchEvents(stack, key, id);
  await sse.done;
  const connectedAt = sse.connectedAt() ?? Number.POSITIVE_INFINITY;
  return sse.received.filter((r) => Date.parse(r.event.at) >= connectedAt).map((r) => r.receivedAt - Date.parse(r.event.at));
}

/** `total` missions with `concurrency` in flight (a closed loop), each followed to its stream's end when `watch`. */
async function level(stack: TestStack, key: string, concurrency: number, total: number, watch: boolean): Promise<Level> {
  let claimed = 0;
  const before = stack.relay.queryCounts();
  const t0 = performance.now();
  const cpu = cpuMeter();
  const client = async () => {
    while (claimed < total) {
      const id = await startMission(stack, key, 'paced', `level ${claimed++}`);
      const sse = watch ? watchEvents(stack, key, id) : undefined;
      await stack.handle(id).result();
      await sse?.done;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const after = stack.relay.queryCounts();
  return {
    missions: total,
    elapsedMs: performance.now() - t0,
    cpu: cpu(),
    queries: after.queries - before.queries,
    pushed: after.pushed - before.pushed,
  };
}

function rows(mode: Mode, t: Tally): Row[] {
  const latency: Row = {
    bench: BENCH,
    figure: `${mode}: emitted → SSE (${t.latencies.length} events, model 300–800 ms): median · p95`,
    value: `${fmtMs(median(t.latencies))} · ${fmtMs(percentile(t.latencies, 95))}`,
  };
  return [latency, ...LEVELS.flatMap(({ concurrency }, i) => levelRows(`${mode}, ${concurrency} concurrent`, t.levels[i]!))];
}

function levelRows(name: string, l: { watched: Level[]; unwatched: Level[] }): Row[] {
  const rate = (ls: Level[]) => median(ls.map((x) => (x.missions * 1000) / x.elapsedMs));
  const perMission = (ls: Level[], f: (x: Level) => number) => ls.reduce((a, x) => a + f(x), 0) / ls.reduce((a, x) => a + x.missions, 0);
  const cpuMs = (ls: Level[], k: 'processS' | 'temporalS') => perMission(ls, (x) => x.cpu[k] * 1000).toFixed(1);
  const [watched, unwatched] = [rate(l.watched), rate(l.unwatched)];
  return [
    {
      bench: BENCH,
      figure: `${name}: missions/s unwatched · watched (median of ${ROUNDS}) · ratio`,
      value: `${unwatched.toFixed(1)} · ${watched.toFixed(1)} · ${(watched / unwatched).toFixed(2)}×`,
    },
    {
      bench: BENCH,
      figure: `${name}: CPU ms per mission, API + worker unwatched · watched; Temporal unwatched · watched`,
      value: `${cpuMs(l.unwatched, 'processS')} · ${cpuMs(l.watched, 'processS')}; ${cpuMs(l.unwatched, 'temporalS')} · ${cpuMs(l.watched, 'temporalS')}`,
    },
    {
      bench: BENCH,
      figure: `${name}: watched, events queries · pushes per mission; cores (process · Temporal · Postgres · machine)`,
      value: `${perMission(l.watched, (x) => x.queries).toFixed(1)} · ${perMission(l.watched, (x) => x.pushed).toFixed(1)}; ${formatCores(l.watched.at(-1)!.cpu, cpus().length)}`,
    },
  ];
}
