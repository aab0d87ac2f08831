import { cpus, loadavg } from 'node:os';
import { measure as measureVersus, type Run as VersusRun } from './baseline-vs-cadenza.ts';
import { startBenchStack } from './bench-kit.ts';
import { measure as measureOverhead, medianCounts, onPath, OVERHEAD_TURNS as TURNS, type Run } from './mission-overhead.ts';
import { profiled, type PassProfile } from './profiled-pass.ts';
import { formatCounts } from './query-count.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';
import { level } from './throughput.ts';
import { LOAD_CLIENTS, underLoad, type UnderLoad } from './under-load.ts';

const BENCH = 'speed-goals';
/** Closed-loop runs of 50 concurrent missions, each level watched and unwatched (issue 31 goal 3: 5 runs). */
const THROUGHPUT_RUNS = Number(process.env.SPEED_GOALS_THROUGHPUT_RUNS ?? 5);
const THROUGHPUT_MISSIONS = 150;
/** `SPEED_GOALS_PROFILE=<dir>`: profiled passes after the measured ones (their figures stay out of the goals). */
const PROFILE_DIR = process.env.SPEED_GOALS_PROFILE;
/** `SPEED_GOALS_EMBEDDED=1`: run `embedded-thousand` (minutes) for goal 5 instead of citing its last figure. */
const EMBEDDED = process.env.SPEED_GOALS_EMBEDDED === '1';
/** Goal 5's last measured figure (`bash scripts/bench.sh embedded-thousand`), cited when it is not run. */
const EMBEDDED_CITED =
  '1,000 of 1,000 calls in flight at the peak · RSS peak 1,312 and 1,218 MB in two runs (embedded-thousand, 2026-12-05, load ~4)';
/**
 * `SPEED_GOALS_AB=<checkout>`: goal 4 as an interleaved A/B in the production shape instead, the processes of that
 * checkout (the code before a change) against this one's, SPEED_GOALS_AB_ROUNDS rounds (2) each, the order alternating.
 */
const AB_BEFORE = process.env.SPEED_GOALS_AB;
const AB_ROUNDS = Number(process.env.SPEED_GOALS_AB_ROUNDS ?? 2);
/**
 * `SPEED_GOALS_WORKERS=<n>`: goal 4's production shape with n worker processes (1), each serving every task queue.
 * Two counts (`1,2`): an interleaved A/B of them instead, as SPEED_GOALS_AB's, SPEED_GOALS_AB_ROUNDS rounds each.
 */
const WORKERS = (process.env.SPEED_GOALS_WORKERS ?? '1').split(',').map((n) => Number(n.trim()));
if (WORKERS.some((n) => !Number.isInteger(n) || n < 1) || WORKERS.length > 2)
  throw new Error(`SPEED_GOALS_WORKERS must be a worker count or two (1,2), not ${process.env.SPEED_GOALS_WORKERS}`);
const workerProcesses = (n: number) => `${n} worker process${n === 1 ? '' : 'es'}`;
/** `SPEED_GOALS_ONLY=4` (or `1,4`): only those goals' measurements (2 and 6 share theirs); all six when unset. */
const ONLY = process.env.SPEED_GOALS_ONLY?.split(',').map((g) => Number(g.trim()));
const wanted = (...goals: number[]) => !ONLY || goals.some((g) => ONLY.includes(g));

const load1 = () => loadavg()[0]!;
const x = (r: number) => `${r.toFixed(2)}×`;

/**
 * Issue 31's six goals in one run, one row each: goal · target, then figure · met or not · the machine's 1-minute
 * load over the goal's measurement. Below them the breakdowns that explain a figure (`why N`). Reuses the benches
 * that measure each goal: baseline-vs-cadenza (1), mission-overhead (2, 6), throughput (3), cancel-latency and
 * event-latency under load (4); goal 5 is embedded-thousand's (cited unless `SPEED_GOALS_EMBEDDED=1`).
 */
export async function run(): Promise<Row[]> {
  const goals: Row[] = [];
  const why: Row[] = [];
  const goal = (n: number, what: string, figure: string, met: boolean | string, loads: number[]) =>
    goals.push({
      bench: BENCH,
      figure: `goal ${n}: ${what}`,
      value: `${figure} · ${typeof met === 'string' ? met : met ? 'met' : 'NOT MET'} · load ${loadRange(loads)}`,
    });
  const because = (n: number, what: string, value: string) => why.push({ bench: BENCH, figure: `why ${n}: ${what}`, value });

  let loads: number[];
  // Goal 1: per turn against the transcript-in-history design, both result sizes; history flat.
  if (wanted(1)) {
    loads = [load1()];
    const versus = await measureVersus();
    loads.push(load1());
    const m = (runs: VersusRun[], k: keyof VersusRun) => median(runs.map((r) => r[k]));
    const ratios = versus.map((v) => m(v.cadenza, 'perTurnMs') / m(v.usual, 'perTurnMs'));
    const history100 = m(versus.find((v) => v.size === 100_000)!.cadenza, 'historyBytes');
    goal(
      1,
      'per turn, Cadenza / naive (transcript in history), 1 KB · 100 KB results; history of the 100 KB run (≤ 1.0× both; < 50 KB)',
      `${versus.map((v, i) => `${x(ratios[i]!)} (${fmtMs(m(v.cadenza, 'perTurnMs'))} / ${fmtMs(m(v.usual, 'perTurnMs'))})`).join(' · ')}; ${(history100 / 1024).toFixed(0)} KB`,
      ratios.every((r) => r <= 1) && history100 < 50 * 1024,
      loads,
    );
  }

  // Goals 2 and 6: the interleaved mission / bare / bare-with-calls series, then the profiled passes.
  if (wanted(2, 6)) {
    loads = [load1()];
    const passes: Record<string, PassProfile> = {};
    const overhead = await measureOverhead({
      afterwards: PROFILE_DIR
        ? async (pass) => {
            passes.mission = await profiled(PROFILE_DIR!, 'mission', PER_TURN, (i) => pass.mission(i));
            passes.calling = await profiled(PROFILE_DIR!, 'calling', PER_TURN, (i) => pass.calling(i));
          }
        : undefined,
    });
    loads.push(load1());
    const { missions, bares, callings } = overhead;
    const perTurn = (runs: Run[], f: (r: Run) => number) => median(runs.map((r) => f(r) / TURNS));
    const e2e = (runs: Run[]) => perTurn(runs, (r) => r.e2eMs);
    const cpuOf = (runs: Run[]) => perTurn(runs, (r) => r.cpu.processS * 1000);
    const queries = medianCounts(missions.map((r) => onPath(r.queries ?? {})));
    const queriesPerTurn = queries.total! / TURNS;
    const cpuRatio = cpuOf(missions) / cpuOf(callings);
    goal(
      2,
      'per turn, mission / bare workflow with the same calls (≤ 1.25×); Postgres queries per turn on the path (≤ 5); CPU per turn of API + worker, mission / bare (≤ 1.5×)',
      `${x(e2e(missions) / e2e(callings))} (${fmtMs(e2e(missions))} / ${fmtMs(e2e(callings))}); ${queriesPerTurn.toFixed(1)}; ${x(cpuRatio)} against bare with the calls (${fmtMs(cpuOf(missions))} / ${fmtMs(cpuOf(callings))}), ${x(cpuOf(missions) / cpuOf(bares))} against empty bare (${fmtMs(cpuOf(bares))})`,
      e2e(missions) / e2e(callings) <= 1.25 && queriesPerTurn <= 5 && cpuRatio <= 1.5,
      loads,
    );
    overheadBreakdown(overhead, because);
    for (const [name, p] of Object.entries(passes)) because(2, `profiled pass, ${name}: ${p.label}`, p.value);

    // Goal 6: Temporal actions per turn, and those that are not the model and tool calls.
    const actions = (runs: Run[]) => medianCounts(runs.map((r) => r.actions));
    const calls = (runs: Run[]) =>
      median(runs.map((r) => ['callModel', 'runTool', 'model', 'tool'].reduce((a, t) => a + (r.byType[t]?.length ?? 0), 0)));
    const beyond = (runs: Run[]) => (actions(runs).total! - calls(runs)) / TURNS;
    goal(
      6,
      'Temporal actions per turn counted; beyond the model and tool calls cut to what the mission needs',
      `mission ${(actions(missions).total! / TURNS).toFixed(1)} (${formatCounts(actions(missions), TURNS)}), of which beyond the calls ${beyond(missions).toFixed(1)}; bare ${(actions(bares).total! / TURNS).toFixed(1)}, beyond ${beyond(bares).toFixed(1)}`,
      beyond(missions) <= beyond(bares) ? 'met' : `counted; ${((beyond(missions) - beyond(bares)) * TURNS).toFixed(0)} per run above bare`,
      loads,
    );
  }

  // Goal 3: 50 concurrent, watched / unwatched, THROUGHPUT_RUNS times, the order alternating.
  if (wanted(3)) {
    loads = [load1()];
    const throughput = await throughputRuns();
    loads.push(load1());
    goal(
      3,
      `50 concurrent, watched / unwatched missions/s, ${THROUGHPUT_RUNS} runs (≥ 0.95× in every run, machine saturated)`,
      `${throughput.map((t) => x(t.ratio)).join(' · ')} (machine cores busy ${throughput.map((t) => t.machineCores.toFixed(1)).join(' · ')} of ${cpus().length})`,
      throughput.every((t) => t.ratio >= 0.95),
      loads,
    );
    because(
      3,
      'missions/s unwatched · watched per run',
      throughput.map((t) => `${t.unwatched.toFixed(1)} · ${t.watched.toFixed(1)}`).join(' / '),
    );
  }

  // Goal 4: a tool cancel and the events' latency while 50 other missions run, in the production shape (the API and
  // the worker in processes of their own) and, as the reference, with everything in this process.
  if (wanted(4) && (AB_BEFORE || WORKERS.length === 2)) {
    const sides: [Side, Side] = AB_BEFORE
      ? [
          { name: 'before', what: AB_BEFORE, opts: { tree: AB_BEFORE, workers: WORKERS[0]! } },
          { name: 'after', what: 'this checkout', opts: { workers: WORKERS[0]! } },
        ]
      : [
          { name: workerProcesses(WORKERS[0]!), what: 'this checkout', opts: { workers: WORKERS[0]! } },
          { name: workerProcesses(WORKERS[1]!), what: 'this checkout', opts: { workers: WORKERS[1]! } },
        ];
    for (const [what, value] of await goal4Ab(sides)) because(4, what, value);
  } else if (wanted(4)) {
    const shapes: UnderLoad[] = [];
    const shapeLoads: number[][] = [];
    for (const shape of ['split', 'one process'] as const) {
      const before = load1();
      const u = await underLoad(shape, {
        ...(PROFILE_DIR ? { profileDir: PROFILE_DIR } : {}),
        ...(shape === 'split' ? { workers: WORKERS[0]! } : {}),
      });
      shapes.push(u);
      shapeLoads.push([before, ...u.loads, load1()]);
    }
    const p95s = (u: UnderLoad) => ({
      abort: percentile(
        u.cancels.map((s) => s.abortMs),
        95,
      ),
      events: percentile(u.events, 95),
    });
    const figure = (u: UnderLoad) =>
      `${fmtMs(p95s(u).abort)} (${u.cancels.length} cancels); ${fmtMs(p95s(u).events)} (${u.events.length} events)`;
    const [split, one] = [shapes[0]!, shapes[1]!];
    goal(
      4,
      `with ${LOAD_CLIENTS} other missions running: cancel sent → tool sees the abort, p95; events emitted → SSE, p95 (≤ 100 ms both); production shape (the API and ${workerProcesses(WORKERS[0]!)}, each an OS process of its own)`,
      figure(split),
      p95s(split).abort <= 100 && p95s(split).events <= 100,
      shapeLoads[0]!,
    );
    because(
      4,
      `the same in one process (API, worker, fakes and the load's clients together), load ${loadRange(shapeLoads[1]!)}`,
      figure(one),
    );
    for (const u of shapes) for (const [what, value] of u.why) because(4, what, value);
  }

  // Goal 5: the embedded default at 1,000 missions.
  loads = [load1()];
  if (wanted(5) && EMBEDDED) {
    const rows = await (await import('./embedded-thousand.ts')).run();
    loads.push(load1());
    const peak = rows.find((r) => r.figure.startsWith('peak tool calls'))?.value ?? '?';
    const rss = rows.find((r) => r.figure.startsWith('process RSS'))?.value ?? '?';
    const [inFlight, of] = peak.split(' of ').map(Number);
    const peakMb = Number(rss.split(' · ')[1]?.replace(/[^0-9.]/g, ''));
    goal(
      5,
      'embedded default, 1,000 missions on 60 s tools: all calls in flight, process < 1.5 GB',
      `${peak} in flight · RSS idle · peak · end ${rss}`,
      inFlight === of && peakMb < 1536,
      loads,
    );
    for (const r of rows) because(5, r.figure, r.value);
  } else if (wanted(5))
    goals.push({
      bench: BENCH,
      figure:
        'goal 5: embedded default, 1,000 missions on 60 s tools: all calls in flight, process < 1.5 GB (or the README says where it stops)',
      value: `${EMBEDDED_CITED} · met then · cited, not run (SPEED_GOALS_EMBEDDED=1 runs it)`,
    });

  return [...goals.sort((a, b) => a.figure.localeCompare(b.figure)), ...why];
}

/** One side of goal 4's A/B: its name in the rows, what it runs, and the split stack's options for it. */
type Side = { name: string; what: string; opts: { tree?: string; workers: number } };

/**
 * Goal 4's A/B: each round runs the split shape on both sides (two checkouts, or two worker counts), the order
 * alternating so that a drift in the machine's load favours neither. Per side: the p95s and medians of each round and
 * of all its samples together, then every round's breakdown (path, loop delays).
 */
async function goal4Ab(sides: [Side, Side]): Promise<Array<[string, string]>> {
  const runs: Array<{ side: Side; u: UnderLoad; loads: number[] }> = [];
  for (let r = 0; r < AB_ROUNDS; r++)
    for (const side of r % 2 ? [sides[1], sides[0]] : sides) {
      const before = load1();
      const u = await underLoad('split', { label: `split ${side.name} (round ${r + 1})`, ...side.opts });
      runs.push({ side, u, loads: [before, ...u.loads, load1()] });
    }
  const fig = (aborts: number[], events: number[]) =>
    `abort p95 ${fmtMs(percentile(aborts, 95))} (median ${fmtMs(median(aborts))}, ${aborts.length}); events p95 ${fmtMs(percentile(events, 95))} (median ${fmtMs(median(events))}, ${events.length})`;
  const rows: Array<[string, string]> = [];
  for (const side of sides) {
    const of = runs.filter((x) => x.side === side);
    rows.push([
      `A/B, ${side.name} (${side.what}), each round then all together`,
      [
        ...of.map(
          (x) =>
            `${fig(
              x.u.cancels.map((c) => c.abortMs),
              x.u.events,
            )} · load ${loadRange(x.loads)}`,
        ),
        `together: ${fig(
          of.flatMap((x) => x.u.cancels.map((c) => c.abortMs)),
          of.flatMap((x) => x.u.events),
        )}`,
      ].join(' / '),
    ]);
  }
  for (const x of runs) rows.push(...x.u.why);
  return rows;
}

const loadRange = (loads: number[]) => {
  const lo = Math.min(...loads);
  const hi = Math.max(...loads);
  return hi - lo < 0.5 ? lo.toFixed(1) : `${lo.toFixed(1)}–${hi.toFixed(1)}`;
};

/**
 * Where each millisecond of a turn's difference between a mission and the bare workflow with the same calls goes:
 * the API and the client around the run, then the run's own phases on the server's clock (workflow task wait, the
 * workflow task, activity wait, the activities by kind), per turn; Postgres queries by activity; CPU per turn.
 */
function overheadBreakdown(
  { missions, bares, callings }: { missions: Run[]; bares: Run[]; callings: Run[] },
  because: (n: number, what: string, value: string) => void,
) {
  const perTurn = (runs: Run[], f: (r: Run) => number) => median(runs.map((r) => f(r) / TURNS));
  const sum = (xs: number[] | undefined) => (xs ?? []).reduce((a, b) => a + b, 0);
  const parts: Array<[string, (r: Run) => number]> = [
    ['outside the run (API or client start, result)', (r) => r.e2eMs - r.workflowMs],
    ['workflow task wait', (r) => r.phases.workflowTaskWaitMs],
    ['workflow task', (r) => r.phases.workflowTaskMs],
    ['activity wait', (r) => r.phases.activityWaitMs],
    ['model activities', (r) => sum(r.byType.callModel) + sum(r.byType.model)],
    ['tool activities', (r) => sum(r.byType.runTool) + sum(r.byType.tool)],
    [
      'prepare + complete',
      (r) => sum(r.byType.prepareMission) + sum(r.byType.completeMission) + sum(r.byType.prepare) + sum(r.byType.complete),
    ],
    ['whole turn', (r) => r.e2eMs],
  ];
  because(
    2,
    'per turn, mission / bare with the calls / bare (difference mission − with the calls), medians',
    parts
      .map(([what, f]) => {
        const [a, b, c] = [perTurn(missions, f), perTurn(callings, f), perTurn(bares, f)];
        return `${what} ${fmtMs(a)} / ${fmtMs(b)} / ${fmtMs(c)} (${a - b >= 0 ? '+' : ''}${(a - b).toFixed(1)})`;
      })
      .join(' · '),
  );
  const callMs = (runs: Run[], type: string) => median(runs.flatMap((r) => r.byType[type] ?? []));
  because(
    2,
    'one call inside its activity (median): model · tool, mission / bare with the calls',
    `${fmtMs(callMs(missions, 'callModel'))} / ${fmtMs(callMs(callings, 'model'))} · ${fmtMs(callMs(missions, 'runTool'))} / ${fmtMs(callMs(callings, 'tool'))}`,
  );
  because(
    2,
    'Postgres queries per turn on the path, by activity (NOTIFYs apart)',
    formatCounts(medianCounts(missions.map((r) => onPath(r.queries ?? {}))), TURNS),
  );
  because(
    2,
    'CPU per turn: this process (API, worker, fakes) · Temporal dev server, mission / bare with the calls / bare',
    (['processS', 'temporalS'] as const)
      .map((k) => [missions, callings, bares].map((runs) => fmtMs(perTurn(runs, (r) => r.cpu[k] * 1000))).join(' / '))
      .join(' · '),
  );
}

const PROFILED_RUNS = 5;
const PER_TURN = { runs: PROFILED_RUNS, per: PROFILED_RUNS * TURNS, unit: 'turn' };

type ThroughputRun = { unwatched: number; watched: number; ratio: number; machineCores: number };

async function throughputRuns(): Promise<ThroughputRun[]> {
  const { stack, key } = await startBenchStack({ name: 'quick', tools: ['lab.lookup'], maxTurns: 2 }, { MODEL_CONCURRENCY: '50' });
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0 ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } } : { reply: { text: 'done' } },
    );
    await level(stack, key, 2, 4); // warm-up
    const out: ThroughputRun[] = [];
    for (let i = 0; i < THROUGHPUT_RUNS; i++) {
      // Alternate which side goes first, so a drift in the machine's load favours neither.
      const order = i % 2 ? [true, false] : [false, true];
      const got: Record<string, { perS: number; busy: number }> = {};
      for (const watch of order) {
        const r = await level(stack, key, 50, THROUGHPUT_MISSIONS, watch);
        got[String(watch)] = { perS: (THROUGHPUT_MISSIONS * 1000) / r.elapsedMs, busy: r.cpu.machineS / r.cpu.wallS };
      }
      const [u, w] = [got.false!, got.true!];
      out.push({ unwatched: u.perS, watched: w.perS, ratio: w.perS / u.perS, machineCores: Math.min(u.busy, w.busy) });
      log(BENCH, `throughput run ${i + 1}: watched / unwatched ${x(w.perS / u.perS)}`);
    }
    return out;
  } finally {
    await stack.stop();
  }
}
