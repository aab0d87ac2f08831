import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { TestStack } from '../testkit/test-stack.ts';
import { missionResult, startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { cpuMeter, formatCores } from './cpu.ts';
import { fmtMs, log, percentile, type Row } from './stats.ts';
import { countQueries } from './query-count.ts';

const BENCH = 'throughput';
// `watch`: an SSE client follows each mission to its end (the relay asks its events query when woken by the worker).
const LEVELS: Array<{ concurrency: number; missions: number; watch?: boolean }> = [
  { concurrency: 1, missions: 15 },
  { concurrency: 10, missions: 60 },
  { concurrency: 50, missions: 150 },
  { concurrency: 50, missions: 150, watch: true },
];

/**
 * Missions per second with C missions always in flight (a closed loop: each of C clients starts the next mission
 * when its last one finished). Each mission: one model turn asking for one tool call (zero latency), the tool, one
 * answering model turn. MODEL_CONCURRENCY=50 so the model slots are not the bottleneck. The bench process holds the
 * API, the worker, the fake model and tool servers and the clients; Temporal and Postgres are other processes.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'quick', tools: ['lab.lookup'], maxTurns: 2 }, { MODEL_CONCURRENCY: '50' });
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0 ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } } : { reply: { text: 'done' } },
    );
    await level(stack, key, 2, 4); // warm-up: connections, worker caches, JIT
    const rows: Row[] = [];
    for (const { concurrency, missions, watch = false } of LEVELS) {
      const r = await level(stack, key, concurrency, missions, watch);
      const name = `${concurrency} concurrent${watch ? ' + SSE' : ''}`;
      log(BENCH, `${name}: ${missions} missions in ${(r.elapsedMs / 1000).toFixed(1)} s`);
      rows.push({
        bench: BENCH,
        figure: `${name} (${missions} missions): missions/s · p50 · p95 latency`,
        value: `${((missions * 1000) / r.elapsedMs).toFixed(1)}/s · ${fmtMs(percentile(r.latencies, 50))} · ${fmtMs(percentile(r.latencies, 95))}`,
      });
      rows.push({
        bench: BENCH,
        figure: `${name}: CPU cores used by bench process · Temporal · Postgres · machine`,
        value: formatCores(r.cpu, cpus().length),
      });
      const perMission = (n: number) => (n / missions).toFixed(1);
      if (watch)
        rows.push({
          bench: BENCH,
          figure: `${name}: the workflow's result → its stream closed: p50 · p95`,
          value: `${fmtMs(percentile(r.streamLags, 50))} · ${fmtMs(percentile(r.streamLags, 95))}`,
        });
      rows.push({
        bench: BENCH,
        figure: `${name}: Postgres queries per mission · events queries per mission (of which found nothing new) · events pushes per mission · streams that asked no query · ended from the row`,
        value: `${perMission(r.queries)} · ${perMission(r.relay.queries)} (${perMission(r.relay.empty)}) · ${perMission(r.relay.pushed)} · ${r.relay.withoutQuery} · ${r.relay.endedFromRow}`,
      });
    }
    return rows;
  } finally {
    await stack.stop();
  }
}

/** Runs `total` missions with `concurrency` in flight; latency is API start → workflow result. */
export async function level(stack: TestStack, key: string, concurrency: number, total: number, watch = false) {
  const latencies: number[] = [];
  const streamLags: number[] = []; // the result in hand → the stream closed (its terminal event read)
  let claimed = 0;
  const takeQueries = countQueries();
  takeQueries();
  const relayBefore = stack.relay.queryCounts();
  const t0 = performance.now();
  const cpu = cpuMeter();
  const client = async () => {
    while (claimed < total) {
      const n = claimed++;
      const started = performance.now();
      const id = await startMission(stack, key, 'quick', `throughput ${concurrency}/${n}`);
      const sse = watch ? watchEvents(stack, key, id) : undefined;
      const result = await missionResult(stack, id);
      if (result.metrics.toolCalls !== 1) throw new Error(`mission ${id} made ${result.metrics.toolCalls} tool calls`);
      const ended = performance.now();
      latencies.push(ended - started);
      await sse?.done; // the stream closes after the terminal event
      if (sse) streamLags.push(performance.now() - ended);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsedMs = performance.now() - t0;
  const used = cpu();
  const queries = Object.values(takeQueries()).reduce((a, b) => a + b, 0);
  const relayAfter = stack.relay.queryCounts();
  const relay = {
    queries: relayAfter.queries - relayBefore.queries,
    empty: relayAfter.empty - relayBefore.empty,
    endedFromRow: relayAfter.endedFromRow - relayBefore.endedFromRow,
    pushed: relayAfter.pushed - relayBefore.pushed,
    withoutQuery: relayAfter.withoutQuery - relayBefore.withoutQuery,
  };
  return { elapsedMs, latencies, streamLags, cpu: used, queries, relay };
}
