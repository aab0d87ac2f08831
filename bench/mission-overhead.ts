import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { TestStack } from '../testkit/test-stack.ts';
import { bareActivities, callingActivities, type BareActivities } from './bare-activities.ts';
import { createModelClient } from '../model/create-model-client.ts';
import type { BareInput } from './bare-workflow.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { cpuMeter, type CpuUse } from './cpu.ts';
import { runTiming, type RunTiming } from './history-timing.ts';
import { fmtMs, log, median, type Row } from './stats.ts';
import { countQueries, formatCounts, type QueryCounts } from './query-count.ts';

const BENCH = 'mission-overhead';
const TURNS = 5;
/** Rounds of the interleaved series (`BENCH_OVERHEAD_SAMPLES`, default 10): more steady the medians on a loaded machine. */
const SAMPLES = Number(process.env.BENCH_OVERHEAD_SAMPLES ?? 10);
const WARMUP = 2;
const noop = () => {};
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

export type Run = RunTiming & { e2eMs: number; cpu: CpuUse; queries?: QueryCounts };

/**
 * Orchestration overhead: a mission of TURNS tool turns (one tool call each, then an answer) with a zero-latency
 * fake model and tool, against a bare workflow running the same activities with empty bodies on the same server, and
 * against that bare workflow making the same model and tool calls (no Postgres): what the calls alone cost, and
 * what Cadenza adds to them.
 */
/** The runs of one interleaved series: missions, bare runs, bare runs with the calls (warm-ups left out). */
export type OverheadRuns = { missions: Run[]; bares: Run[]; callings: Run[] };

/** What `afterwards` may run on the same stack once the measured series is over (a profiled pass, say). */
export type OverheadPass = { mission(i: number): Promise<Run>; calling(i: number): Promise<Run> };

export async function run(): Promise<Row[]> {
  return rows(await measure());
}

/**
 * The interleaved series: `samples` rounds after `warmup`, each a mission, a bare run and a bare run with the calls;
 * then `afterwards` on the same stack and workers, before they stop.
 */
export async function measure(
  opts: { samples?: number; warmup?: number; afterwards?: (pass: OverheadPass) => Promise<void> } = {},
): Promise<OverheadRuns> {
  const samples = opts.samples ?? SAMPLES;
  const warmup = opts.warmup ?? WARMUP;
  const { stack, key } = await startBenchStack({ name: 'overhead', tools: ['lab.lookup'], maxTurns: TURNS + 1 });
  const bare = await startBareWorkers(stack.env.TEMPORAL_ADDRESS!, bareActivities);
  const lookup = stack.registry.getTool('lab.lookup');
  if (!lookup?.http) throw new Error('the lab app has no HTTP tool lab.lookup');
  const { model: modelConfig } = stack.config;
  const calling = await startBareWorkers(
    stack.env.TEMPORAL_ADDRESS!,
    callingActivities({
      model: createModelClient(modelConfig),
      modelId: modelConfig.tiers.allegro,
      tool: { ...lookup, http: lookup.http },
      env: stack.env,
    }),
  );
  const takeQueries = countQueries();
  try {
    // Stateless script: a tool call until TURNS results are in the conversation, then the answer.
    stack.model.setHandler((req) =>
      req.allToolResults.length < TURNS
        ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    const missions: Run[] = [];
    const bares: Run[] = [];
    const callings: Run[] = [];
    // Interleaved, so drift in the machine's load hits both sides alike.
    for (let i = 0; i < warmup + samples; i++) {
      takeQueries();
      const m = await runMission(stack, key, i);
      m.queries = takeQueries();
      const b = await runBare(stack.temporal, bare.taskQueue, i);
      const c = await runBare(stack.temporal, calling.taskQueue, i);
      if (i < warmup) continue;
      missions.push(m);
      bares.push(b);
      callings.push(c);
    }
    log(BENCH, `${samples} missions, ${samples} bare runs and ${samples} bare runs with the calls, of ${TURNS} tool turns, done`);
    await opts.afterwards?.({
      mission: (i) => runMission(stack, key, warmup + samples + i),
      calling: (i) => runBare(stack.temporal, calling.taskQueue, warmup + samples + i),
    });
    return { missions, bares, callings };
  } finally {
    await Promise.all([bare.stop(), calling.stop()]);
    await stack.stop();
  }
}

/** Tool turns of a mission and of a bare run. */
export const OVERHEAD_TURNS = TURNS;

/** The figures of one series as rows. */
function rows({ missions, bares, callings }: OverheadRuns): Row[] {
  const samples = missions.length;
  const perTurn = (runs: Run[], k: 'e2eMs' | 'workflowMs' | 'activityMs') => median(runs.map((r) => r[k] / TURNS));
  const cpuPerTurn = (runs: Run[], k: 'processS' | 'temporalS') => median(runs.map((r) => (r.cpu[k] * 1000) / TURNS));
  const callMs = (runs: Run[], type: string) => median(runs.flatMap((r) => r.byType[type] ?? []));
  const ratio = (k: 'e2eMs' | 'workflowMs', of = missions, to = bares) => `${(perTurn(of, k) / perTurn(to, k)).toFixed(2)}x`;
  return [
    {
      bench: BENCH,
      figure: `mission per turn, API start → result (median of ${samples}, ${TURNS} turns)`,
      value: fmtMs(perTurn(missions, 'e2eMs')),
    },
    { bench: BENCH, figure: 'bare workflow per turn, client start → result', value: fmtMs(perTurn(bares, 'e2eMs')) },
    { bench: BENCH, figure: 'ratio mission / bare (end to end)', value: ratio('e2eMs') },
    {
      bench: BENCH,
      figure: 'bare with the same model and tool calls per turn, client start → result',
      value: fmtMs(perTurn(callings, 'e2eMs')),
    },
    { bench: BENCH, figure: 'ratio bare with the calls / bare (the two calls alone)', value: ratio('e2eMs', callings, bares) },
    {
      bench: BENCH,
      figure: 'ratio mission / bare with the calls (what Cadenza adds to the calls)',
      value: ratio('e2eMs', missions, callings),
    },
    {
      bench: BENCH,
      figure: 'one model call · one tool call, inside the activity (median), bare with the calls',
      value: `${fmtMs(callMs(callings, 'model'))} · ${fmtMs(callMs(callings, 'tool'))}`,
    },
    { bench: BENCH, figure: 'mission per turn, workflow start → close (server clock)', value: fmtMs(perTurn(missions, 'workflowMs')) },
    { bench: BENCH, figure: 'bare per turn, workflow start → close (server clock)', value: fmtMs(perTurn(bares, 'workflowMs')) },
    { bench: BENCH, figure: 'ratio mission / bare (workflow only)', value: ratio('workflowMs') },
    {
      bench: BENCH,
      figure: 'of which inside activities (started → completed) per turn: mission / bare',
      value: `${fmtMs(perTurn(missions, 'activityMs'))} / ${fmtMs(perTurn(bares, 'activityMs'))}`,
    },
    {
      bench: BENCH,
      figure: 'per turn, mission / bare: workflow task wait · workflow task · activity wait · activity',
      value: (['workflowTaskWaitMs', 'workflowTaskMs', 'activityWaitMs', 'activityMs'] as const)
        .map((k) => `${fmtMs(median(missions.map((r) => r.phases[k] / TURNS)))} / ${fmtMs(median(bares.map((r) => r.phases[k] / TURNS)))}`)
        .join(' · '),
    },
    {
      bench: BENCH,
      figure: 'one model call, inside the activity (median): mission / bare',
      value: `${fmtMs(callMs(missions, 'callModel'))} / ${fmtMs(callMs(bares, 'model'))}`,
    },
    {
      bench: BENCH,
      figure: 'one tool call, inside the activity (median): mission / bare',
      value: `${fmtMs(callMs(missions, 'runTool'))} / ${fmtMs(callMs(bares, 'tool'))}`,
    },
    {
      bench: BENCH,
      figure: 'once per run, inside the activity (median): prepare / complete, mission · bare',
      value: `${fmtMs(callMs(missions, 'prepareMission'))} / ${fmtMs(callMs(missions, 'completeMission'))} · ${fmtMs(callMs(bares, 'prepare'))} / ${fmtMs(callMs(bares, 'complete'))}`,
    },
    {
      bench: BENCH,
      figure: 'CPU per turn, bench process (API, worker, fakes): mission / bare',
      value: `${fmtMs(cpuPerTurn(missions, 'processS'))} / ${fmtMs(cpuPerTurn(bares, 'processS'))}`,
    },
    {
      bench: BENCH,
      figure: 'CPU per turn, Temporal dev server: mission / bare',
      value: `${fmtMs(cpuPerTurn(missions, 'temporalS'))} / ${fmtMs(cpuPerTurn(bares, 'temporalS'))}`,
    },
    {
      bench: BENCH,
      figure: 'Postgres queries per turn on the path (round trips, BEGIN/COMMIT included; NOTIFYs apart), by activity',
      value: formatCounts(medianCounts(missions.map((r) => onPath(r.queries ?? {}))), TURNS),
    },
    {
      bench: BENCH,
      figure: 'of which the turn loop (model and tool calls) per turn · NOTIFYs per turn (beside the path)',
      value: `${(median(missions.map((r) => (r.queries?.callModel ?? 0) + (r.queries?.runTool ?? 0))) / TURNS).toFixed(1)} · ${(median(missions.map((r) => r.queries?.notify ?? 0)) / TURNS).toFixed(1)}`,
    },
    {
      bench: BENCH,
      figure: 'Temporal actions per turn, by kind · workflow tasks per turn: mission / bare',
      value: [missions, bares]
        .map(
          (runs) =>
            `${formatCounts(medianCounts(runs.map((r) => r.actions)), TURNS)} · ${median(runs.map((r) => r.workflowTasks)) / TURNS}`,
        )
        .join(' / '),
    },
    {
      bench: BENCH,
      figure: 'history events per run: mission / bare',
      value: `${median(missions.map((r) => r.historyLength))} / ${median(bares.map((r) => r.historyLength))}`,
    },
  ];
}

export const onPath = ({ notify: _, ...rest }: QueryCounts): QueryCounts => rest;

/** Each key's median over the runs (a run without the key counts 0), and `total`: the median of the runs' sums. */
export function medianCounts(runs: QueryCounts[]): QueryCounts {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r)))];
  const out: QueryCounts = { total: median(runs.map((r) => Object.values(r).reduce((a, b) => a + b, 0))) };
  for (const k of keys) out[k] = median(runs.map((r) => r[k] ?? 0));
  return out;
}

async function runMission(stack: TestStack, key: string, i: number): Promise<Run> {
  const cpu = cpuMeter();
  const t0 = performance.now();
  const id = await startMission(stack, key, 'overhead', `overhead ${i}`);
  const result = await stack.handle(id).result();
  const e2eMs = performance.now() - t0;
  const used = cpu();
  if (result.metrics.toolCalls !== TURNS) throw new Error(`mission made ${result.metrics.toolCalls} tool calls, expected ${TURNS}`);
  return { e2eMs, cpu: used, ...(await runTiming(stack.handle(id))) };
}

async function runBare(temporal: Client, taskQueue: string, i: number): Promise<Run> {
  const input: BareInput = { turns: TURNS, modelTaskQueue: `${taskQueue}-model` };
  const cpu = cpuMeter();
  const t0 = performance.now();
  const handle = await temporal.workflow.start('bareWorkflow', { taskQueue, workflowId: `bare-${taskQueue}-${i}`, args: [input] });
  await handle.result();
  const e2eMs = performance.now() - t0;
  return { e2eMs, cpu: cpu(), ...(await runTiming(handle)) };
}

/** The bare workflow's two workers (workflow + store/tool-like activities, and model-like activities) on queues of their own. */
export async function startBareWorkers(address: string, activities: BareActivities) {
  const taskQueue = `bench-bare-${randomBytes(4).toString('hex')}`;
  const connection = await NativeConnection.connect({ address });
  const workflowsPath = fileURLToPath(new URL('./bare-workflow.ts', import.meta.url));
  const { model, ...others } = activities;
  const workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: quiet });
  const workers = [
    await Worker.create({ connection, taskQueue, workflowBundle, activities: others }),
    await Worker.create({ connection, taskQueue: `${taskQueue}-model`, activities: { model } }),
  ];
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    taskQueue,
    /** The worker that runs the bare workflow (its tasks, and the store- and tool-like activities). */
    workflows: workers[0]!,
    async stop() {
      workers.forEach((w) => w.shutdown());
      await running;
      await connection.close();
    },
  };
}
