import { loadavg } from 'node:os';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { callingActivities } from './bare-activities.ts';
import type { BareInput } from './bare-workflow.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { OVERHEAD_TURNS as TURNS, startBareWorkers } from './mission-overhead.ts';
import { fmtMs, log, median, type Row } from './stats.ts';
import { tapWorkflowTasks, type ActivationTrace } from './workflow-task-tap.ts';
import { createModelClient } from '../model/create-model-client.ts';

const BENCH = 'workflow-task';
const SAMPLES = Number(process.env.BENCH_WFT_SAMPLES ?? 10);
const WARMUP = 2;
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The steps of one workflow task, in order; each from the end of the one before. */
const STEPS = ['dispatch', 'queue', 'decode', 'activate', 'sinks', 'encode', 'respond'] as const;
type Step = (typeof STEPS)[number];
type Split = Record<Step | 'total', number> & { tasks: number; inBytes: number; outBytes: number; sinkCalls: number; first: number };

/**
 * Where a mission's workflow task spends its time, against the bare workflow with the same calls (issue 31 goal 2):
 * each task's span on the server's clock (WorkflowTaskStarted → WorkflowTaskCompleted) cut at the steps the worker's
 * main thread passes (bench/workflow-task-tap.ts; the dev server runs on this machine, one clock): *dispatch* the
 * server's answer to the poll through Core to JS, *queue* until the SDK's handler takes it, *decode* the payload
 * codecs, *activate* the round trip to the workflow thread and the workflow's run in its V8 context, *sinks* the
 * second round trip for the sink calls and the sinks themselves, *encode* the completion until it goes to Core,
 * *respond* Core's commands to the server until the server records the completion. Per turn (a run's sum / 5), the
 * median of the runs; bytes are the activations' and completions' encoded sizes.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'overhead', tools: ['lab.lookup'], maxTurns: TURNS + 1 });
  const lookup = stack.registry.getTool('lab.lookup');
  if (!lookup?.http) throw new Error('the lab app has no HTTP tool lab.lookup');
  const { model } = stack.config;
  const calling = await startBareWorkers(
    stack.env.TEMPORAL_ADDRESS!,
    callingActivities({
      model: createModelClient(model),
      modelId: model.tiers.allegro,
      tool: { ...lookup, http: lookup.http },
      env: stack.env,
    }),
  );
  const loads = [loadavg()[0]!];
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length < TURNS
        ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    const missionTap = tapWorkflowTasks(stack.worker!.workers.missions as Worker);
    const callingTap = tapWorkflowTasks(calling.workflows);
    const missions: Split[] = [];
    const callings: Split[] = [];
    let fromUs = 0;
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      if (i === WARMUP) fromUs = monotonicUs();
      const id = await startMission(stack, key, 'overhead', `wft ${i}`);
      const m = stack.handle(id);
      await m.result();
      const input: BareInput = { turns: TURNS, modelTaskQueue: `${calling.taskQueue}-model` };
      const c = await stack.temporal.workflow.start('bareWorkflow', {
        taskQueue: calling.taskQueue,
        workflowId: `wft-calling-${calling.taskQueue}-${i}`,
        args: [input],
      });
      await c.result();
      // The warm-ups are not split: the first activation may have been polled before the tap.
      if (i < WARMUP) continue;
      const ms = await split(m, missionTap.take);
      const cs = await split(c, callingTap.take);
      missions.push(ms);
      callings.push(cs);
    }
    // Under NODE_OPTIONS=--cpu-prof each thread writes a profile (the workflow threads too): this is the measured window.
    log(BENCH, `measured window: node bench/profile-summary.ts <file>.cpuprofile ${fromUs} ${monotonicUs()}`);
    loads.push(loadavg()[0]!);
    log(BENCH, `${SAMPLES} missions and ${SAMPLES} bare runs with the calls, ${TURNS} tool turns each, done`);
    return rows(missions, callings, loads);
  } finally {
    await calling.stop();
    await stack.stop();
  }
}

/** One closed run's workflow tasks on the server's clock, each cut at its traced steps; summed over the run. */
async function split(handle: WorkflowHandle, take: (runId: string) => ActivationTrace[]): Promise<Split> {
  const { runId } = await handle.describe();
  const traces = take(runId);
  const events = (await handle.fetchHistory()).events ?? [];
  const at = (e: (typeof events)[number]) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
  const started = new Map<number, number>();
  const sum = Object.fromEntries([...STEPS, 'total', 'tasks', 'inBytes', 'outBytes', 'sinkCalls', 'first'].map((k) => [k, 0])) as Split;
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) started.set(Number(e.eventId), at(e));
    const done = e.workflowTaskCompletedEventAttributes;
    if (!done) continue;
    const from = started.get(Number(done.startedEventId))!;
    const to = at(e);
    // The activation this task delivered: the first polled after the server started the task, before it completed.
    const t = traces.find((x) => x.polledAt >= from - 0.5 && x.completeStart <= to + 0.5);
    if (!t)
      throw new Error(
        `no traced activation for a workflow task of ${handle.workflowId} (${from}–${to}); traced: ${traces.map((x) => `${x.polledAt}–${x.completeStart}`).join(', ')}`,
      );
    traces.splice(traces.indexOf(t), 1);
    const marks = [from, t.polledAt, t.handledAt, t.activateStart, t.activateEnd, t.sinksEnd, t.completeStart, to];
    STEPS.forEach((s, i) => (sum[s] += marks[i + 1]! - marks[i]!));
    sum.total += to - from;
    if (sum.tasks === 0) sum.first = to - from;
    sum.tasks += 1;
    sum.inBytes += t.activationBytes;
    sum.outBytes += t.completionBytes;
    sum.sinkCalls += t.sinkCalls;
  }
  return sum;
}

function rows(missions: Split[], callings: Split[], loads: number[]): Row[] {
  const per = (runs: Split[], k: keyof Split) => median(runs.map((r) => r[k] / TURNS));
  const both = (k: keyof Split, f: (n: number) => string = fmtMs) => `${f(per(missions, k))} / ${f(per(callings, k))}`;
  const num = (n: number) => n.toFixed(1);
  const bytes = (n: number) => `${Math.round(n)} B`;
  return [
    {
      bench: BENCH,
      figure: `workflow task per turn, server clock, mission / bare with the calls (median of ${missions.length}, ${TURNS} turns)`,
      value: both('total'),
    },
    { bench: BENCH, figure: 'workflow tasks per turn: mission / bare', value: both('tasks', num) },
    {
      bench: BENCH,
      figure: 'the first task (the workflow created in its V8 context) per run: mission / bare',
      value: `${fmtMs(median(missions.map((r) => r.first)))} / ${fmtMs(median(callings.map((r) => r.first)))}`,
    },
    ...STEPS.map((s) => ({ bench: BENCH, figure: `per turn, ${s}: mission / bare`, value: both(s, (n) => `${n.toFixed(2)} ms`) })),
    {
      bench: BENCH,
      figure: 'activation bytes · completion bytes per turn: mission / bare',
      value: `${both('inBytes', bytes)} · ${both('outBytes', bytes)}`,
    },
    { bench: BENCH, figure: 'sink calls per turn: mission / bare', value: both('sinkCalls', num) },
    { bench: BENCH, figure: '1-minute load, start · end', value: loads.map((l) => l.toFixed(1)).join(' · ') },
  ];
}
