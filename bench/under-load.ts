import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { skillMd } from '../testkit/test-stack.ts';
import { LOAD_ENV, LOAD_TOOL, loadStep, startBackgroundLoad } from './background-load.ts';
import { missionResult, startBenchStack, type BenchStack } from './bench-kit.ts';
import { sample as cancelSample, type Sample as CancelSample } from './cancel-latency.ts';
import { processCpuSeconds } from './cpu.ts';
import { missionLatencies, SETTLE_MS, TOOL_TURNS, toolDelayMs, type Sample as EventSample } from './event-latency.ts';
import { runTiming } from './history-timing.ts';
import { listenPathStamps } from './path-stamps.ts';
import { describeProfile, monotonicUs, profiled, profileThisProcess, type PassProfile } from './profiled-pass.ts';
import type { Profile } from './profile-summary.ts';
import { loopDelay, startSplitStack } from './split-stack.ts';
import { fmtMs, log, median, percentile } from './stats.ts';

const BENCH = 'speed-goals';
export const LOAD_CLIENTS = 50;
export const CANCELS = 20;
const QUIET_CANCELS = 10;
/** Cancel samples and watched missions measured at once under load (one at a time took ~20 minutes at load 15–19). */
export const BATCH = 4;
const EVENT_MISSIONS = 8;

/**
 * Where goal 4 is measured: `one process` — the API, the worker, the fakes and the load's clients share this process
 * (the test stack); `split` — the production shape, the API and each worker (one, or `workers`) in an OS process of
 * its own (split-stack.ts), the fakes and the load's clients here.
 */
export type Shape = 'one process' | 'split';

export type UnderLoad = { shape: Shape; cancels: CancelSample[]; events: number[]; loads: number[]; why: Array<[string, string]> };

const load1 = () => loadavg()[0]!;
const stat = (v: number[]) => (v.length ? `median ${fmtMs(median(v))} · p95 ${fmtMs(percentile(v, 95))}` : '—');
const delayMs = (d: { p50: number; p99: number; max: number }) => `${fmtMs(d.p50)} · ${fmtMs(d.p99)} · ${fmtMs(d.max)}`;

/**
 * One stack of the shape, LOAD_CLIENTS missions running in closed loops (`background-load.ts`): CANCELS tool cancels
 * (cancel-latency's sample) and EVENT_MISSIONS watched missions (event-latency's), with each process's event-loop
 * delay and CPU over that window, the per-task phases of the watched missions, and the stamps along both paths
 * (path-stamps.ts; the API's own log of each cancel request in the split shape). A few quiet cancels first, as the
 * reference. `profileDir`: in one process, a profiled pass of BATCH cancels after the measured ones; split, every
 * process profiled over the measured window (the API and the worker under `--cpu-prof`, this process by the inspector).
 */
export async function underLoad(
  shape: Shape,
  opts: { profileDir?: string; tree?: string; label?: string; workers?: number } = {},
): Promise<UnderLoad> {
  const { profileDir } = opts;
  const name = opts.label ?? shape;
  const apiLog = new Map<string, { receivedAt: number; answeredAt: number }>();
  const onLine = (_process: string, line: string) => {
    if (!line.includes('"requestId":"cancel-')) return;
    const { requestId, time, durationMs } = JSON.parse(line) as { requestId: string; time: string; durationMs: number };
    apiLog.set(requestId, { receivedAt: Date.parse(time) - durationMs, answeredAt: Date.parse(time) });
  };
  const split =
    shape === 'split'
      ? await startSplitStack(LOAD_ENV, {
          onLine,
          ...(profileDir ? { cpuProfDir: `${profileDir}/split` } : {}),
          ...(opts.tree ? { tree: opts.tree } : {}),
          ...(opts.workers ? { workers: opts.workers } : {}),
        })
      : undefined;
  const one = split ? undefined : await startBenchStack({ name: 'hanger', tools: ['lab.scan'], maxTurns: 2 }, LOAD_ENV);
  const stack: BenchStack = split ?? one!.stack;
  const key = one?.key ?? (await split!.api.newKey());
  const stamps = await listenPathStamps(split?.databaseUrl ?? one!.stack.env.DATABASE_URL!);
  let splitProfiles: { bench: Profile; from: number; to: number } | undefined;
  let result: UnderLoad | undefined;
  try {
    if (split) await stack.api.createSkill(key, skillMd({ name: 'hanger', tools: ['lab.scan'], maxTurns: 2 }));
    await stack.api.createSkill(key, skillMd({ name: 'stepper', tools: ['lab.lookup'], maxTurns: TOOL_TURNS + 1 }));
    stack.tools.on('scan', () => ({ hang: true }));
    stack.tools.on('lookup', () => ({ delayMs: toolDelayMs(), body: { ok: true } }));
    stack.model.setHandler((req) => {
      if (req.toolNames.includes(LOAD_TOOL)) return loadStep(req);
      if (req.toolNames.includes('lab__scan'))
        return req.allToolResults.length === 0
          ? { reply: { toolUses: [{ name: 'lab__scan', input: { target: 't' } }] } }
          : { reply: { text: 'gave up on the scan' } };
      return req.allToolResults.length < TOOL_TURNS
        ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: 'done' } };
    });
    const quiet = (await inBatches(QUIET_CANCELS + 1, 1, (i) => cancelSample(stack, key, i))).slice(1);
    log(BENCH, `${name}: ${quiet.length} quiet cancels; now ${LOAD_CLIENTS} other missions start`);
    const load = await startBackgroundLoad(stack, key, LOAD_CLIENTS);
    let stopped: { completed: number; perSecond: number } | undefined;
    try {
      const loads: number[] = [];
      // The window: this process's loop delay, the processes' loop delays (a scrape resets them) and CPU.
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const pids: Record<string, number> = {
        bench: process.pid,
        ...Object.fromEntries((split?.processes ?? []).map((p) => [p.name, p.service.pid!])),
      };
      if (split) await Promise.all(split.processes.map((p) => loopDelay(p.metricsUrl)));
      const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuSeconds(pid)]));
      const benchProfiler = split && profileDir ? await profileThisProcess(profileDir, 'split-bench') : undefined;
      const fromUs = monotonicUs();

      // BATCH samples at a time: each its own mission, measured on its own (a few more missions beside the 50).
      const cancels = (await inBatches(CANCELS + BATCH, BATCH, (i) => cancelSample(stack, key, 100 + i))).slice(BATCH);
      loads.push(load1());
      log(BENCH, `${name}: ${cancels.length} cancels under load`);
      const ids: string[] = [];
      const watch = (id: string) => (ids.push(id), stamps.watch(id));
      const samples = (await inBatches(EVENT_MISSIONS, BATCH, (i) => missionLatencies(stack, key, 200 + i, watch))).flatMap((s) =>
        s.filter((e) => e.sinceConnectMs >= SETTLE_MS),
      );

      const toUs = monotonicUs();
      const wallS = (toUs - fromUs) / 1e6;
      if (benchProfiler) splitProfiles = { bench: await benchProfiler.stop(), from: fromUs, to: toUs };
      const cores = Object.entries(pids).map(([k, pid]) => `${k} ${((processCpuSeconds(pid) - cpuBefore[k]!) / wallS).toFixed(2)}`);
      const delays = split ? await Promise.all(split.processes.map((p) => loopDelay(p.metricsUrl))) : undefined;
      delay.disable();
      loads.push(load1());
      log(BENCH, `${name}: ${EVENT_MISSIONS} watched missions under load`);

      // The watched missions' tasks on the server's clock: a stream ends at the terminal event, before the run closes.
      const tasks = { workflowTaskWait: [] as number[], workflowTask: [] as number[], activityWait: [] as number[] };
      for (const id of ids) {
        await missionResult(stack, id);
        const t = await runTiming(stack.handle(id));
        const nActivities = Object.values(t.byType).reduce((a, v) => a + v.length, 0);
        tasks.workflowTaskWait.push(t.phases.workflowTaskWaitMs / t.workflowTasks);
        tasks.workflowTask.push(t.phases.workflowTaskMs / t.workflowTasks);
        tasks.activityWait.push(t.phases.activityWaitMs / nActivities);
      }
      const profile: PassProfile | undefined =
        one && profileDir
          ? await profiled(
              profileDir,
              'loaded-cancel',
              { runs: BATCH, per: BATCH, unit: 'cancel' },
              (i) => cancelSample(stack, key, 300 + i),
              true,
            )
          : undefined;
      stopped = await load.stop();
      const ms = (ns: number) => fmtMs(ns / 1e6);
      const under = `${name}, under load`;
      const why: Array<[string, string]> = [
        [
          `${name}: cancel sent → 202 · → tool sees the abort, quiet stack (${quiet.length})`,
          `${stat(quiet.map((s) => s.ackMs))} · ${stat(quiet.map((s) => s.abortMs))}`,
        ],
        [
          `${under}, ${BATCH} cancels at a time: cancel sent → 202 · → tool sees the abort · → tool_end on SSE`,
          `${stat(cancels.map((s) => s.ackMs))} · ${stat(cancels.map((s) => s.abortMs))} · ${stat(cancels.map((s) => s.toolEndMs))}`,
        ],
        ...cancelPath(under, cancels, stamps.cancelHeard, apiLog),
        [`${under}, ${BATCH} watched missions at a time: events emitted → SSE, steady state`, stat(samples.map((s) => s.latencyMs))],
        ...eventPath(under, samples, stamps.eventHeard),
        [
          split
            ? `${under}: event-loop delay p50 · p99 · max of ${split.processes.map((p) => p.name).join(' / ')} / this process (fakes, the load's clients)`
            : `${under}: this process's event-loop delay (API, worker, fakes and the load's clients share it): p50 · p99 · max`,
          [...(delays ?? []).map(delayMs), `${ms(delay.percentile(50))} · ${ms(delay.percentile(99))} · ${ms(delay.max)}`].join(' / '),
        ],
        [`${under}: cores used by each process over the window`, cores.join(' · ')],
        [
          `${under}, per task of the watched missions (server clock, median): workflow task wait · workflow task · activity wait`,
          `${fmtMs(median(tasks.workflowTaskWait))} · ${fmtMs(median(tasks.workflowTask))} · ${fmtMs(median(tasks.activityWait))}`,
        ],
        [`${under}: the other missions completed meanwhile`, `${stopped.completed} (${stopped.perSecond.toFixed(1)}/s)`],
      ];
      if (profile) why.push([`${under}: profiled pass, ${BATCH} cancels at once: ${profile.label}`, profile.value]);
      result = { shape, cancels, events: samples.map((s) => s.latencyMs), loads, why };
      return result;
    } finally {
      if (!stopped) await load.stop().catch(() => {});
    }
  } finally {
    await stamps.close();
    await (split ?? one!.stack).stop();
    // A `--cpu-prof` profile is written when its process exits: read once the processes stopped.
    if (split && splitProfiles && result)
      result.why.push(...splitProfileRows(profileDir!, splitProfiles, { ...split.profiles(), bench: splitProfiles.bench }));
  }
}

/**
 * The split shape's processes, each main thread's samples over the measured window per second of it, by part: where
 * each process's time went while the cancels and events were measured.
 */
function splitProfileRows(profileDir: string, windows: { from: number; to: number }, profiles: Record<string, Profile | undefined>) {
  const perS = (windows.to - windows.from) / 1e6;
  return Object.entries(profiles)
    .filter((e): e is [string, Profile] => e[1] !== undefined)
    .map(
      ([name, p]) =>
        [
          `split, under load: ${name}'s main thread per second of the window, by part (${profileDir})`,
          describeProfile(p, perS, windows.from, windows.to),
        ] as [string, string],
    );
}

/** The cancel's path: sent → the API has the request (its log) → its `stop:` NOTIFY heard → the tool sees the abort. */
function cancelPath(
  under: string,
  cancels: CancelSample[],
  heard: (call: string) => number | undefined,
  apiLog: Map<string, { receivedAt: number; answeredAt: number }>,
): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  const api = cancels.map((c) => [c, apiLog.get(c.requestId)] as const).filter((e) => e[1] !== undefined);
  if (api.length)
    rows.push([
      `${under}, cancel path (${api.length}): sent → the API has the request · the API's time on it (its log)`,
      `${stat(api.map(([c, a]) => a!.receivedAt - c.sentAt))} · ${stat(api.map(([, a]) => a!.answeredAt - a!.receivedAt))}`,
    ]);
  const withHeard = cancels.map((c) => [c, heard(c.call)] as const).filter((e) => e[1] !== undefined);
  rows.push([
    `${under}, cancel path (${withHeard.length} of ${cancels.length} heard): sent → the API's stop NOTIFY heard by a listener here · heard → the tool sees the abort`,
    `${stat(withHeard.map(([c, h]) => h! - c.sentAt))} · ${stat(withHeard.map(([c, h]) => c.sentAt + c.abortMs - h!))}`,
  ]);
  return rows;
}

/** The events' path: emitted (workflow clock) → the worker's push or wake-up heard by a listener here → the SSE client. */
function eventPath(
  under: string,
  samples: EventSample[],
  heard: (missionId: string, seq: number) => { at: number; kind: 'push' | 'wake' } | undefined,
): Array<[string, string]> {
  return (['push', 'wake'] as const).map((kind) => {
    const of = samples.map((s) => [s, heard(s.missionId, s.seq)] as const).filter((e) => e[1]?.kind === kind);
    return [
      `${under}, events path, those that came by ${kind} (${of.length} of ${samples.length}): emitted → heard by a listener here · heard → SSE · emitted → SSE`,
      `${stat(of.map(([s, h]) => h!.at - s.emittedAt))} · ${stat(of.map(([s, h]) => s.emittedAt + s.latencyMs - h!.at))} · ${stat(of.map(([s]) => s.latencyMs))}`,
    ];
  });
}

/** `n` calls of `fn`, `size` at a time, in order of their index. */
export async function inBatches<T>(n: number, size: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += size) out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, k) => fn(i + k)))));
  return out;
}
