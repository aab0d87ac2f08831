import { cpus, loadavg } from 'node:os';
import { CLUSTER_SERVICES } from '../testkit/chaos/temporal-cluster.ts';
import type { ClusterScaleStack } from './cluster-scale-stack.ts';
import { clusterServicePid, machineCpuSeconds, mb, postgresPid, readProc, treeCpuSeconds } from './proc-stats.ts';
import type { Row } from './stats.ts';

/** CPU seconds so far of each measured part. */
function cpuNow(stack: ClusterScaleStack, pids: { history?: number; services: number[]; postgres?: number }) {
  const { user, system } = process.cpuUsage();
  return {
    workers: stack.workers.map((w) => (w.pid ? readProc(w.pid).cpuS : 0)),
    apis: stack.apis.reduce((a, api) => a + (api.process.pid ? readProc(api.process.pid).cpuS : 0), 0),
    history: pids.history ? readProc(pids.history).cpuS : 0,
    temporal: pids.services.reduce((a, pid) => a + readProc(pid).cpuS, 0),
    postgres: pids.postgres ? treeCpuSeconds(pids.postgres) : 0,
    bench: (user + system) / 1e6,
    machine: machineCpuSeconds(),
  };
}

/**
 * Samples every second, from /proc, the peaks the bench reports: each worker's RSS, the history service's RSS and the
 * machine's 1-minute load; `stop` returns them with the CPU each part used meanwhile.
 */
export function startSampler(stack: ClusterScaleStack) {
  const address = stack.cluster.address;
  const services = CLUSTER_SERVICES.map((s) => clusterServicePid(address, s)).filter((p): p is number => p !== undefined);
  const pids = { history: clusterServicePid(address, 'history'), services, postgres: postgresPid(stack.postgres.port) };
  const t0 = Date.now();
  const before = cpuNow(stack, pids);
  const peak = { workerRss: stack.workers.map(() => 0), historyRss: 0, load: 0 };
  const timer = setInterval(() => {
    stack.workers.forEach((w, i) => (peak.workerRss[i] = Math.max(peak.workerRss[i]!, w.pid ? readProc(w.pid).rss : 0)));
    if (pids.history) peak.historyRss = Math.max(peak.historyRss, readProc(pids.history).rss);
    peak.load = Math.max(peak.load, loadavg()[0]!);
  }, 1_000);
  return {
    stop() {
      clearInterval(timer);
      const after = cpuNow(stack, pids);
      const used = {
        workers: after.workers.map((s, i) => s - before.workers[i]!),
        apis: after.apis - before.apis,
        history: after.history - before.history,
        temporal: after.temporal - before.temporal,
        postgres: after.postgres - before.postgres,
        bench: after.bench - before.bench,
        machine: after.machine - before.machine,
      };
      return {
        peak,
        used,
        wallS: (Date.now() - t0) / 1000,
        found: { history: !!pids.history, services: services.length, postgres: !!pids.postgres },
      };
    },
  };
}

type Figures = ReturnType<ReturnType<typeof startSampler>['stop']>;

const s = (x: number) => `${x.toFixed(0)} s`;
const cpuS = (x: number) => `${x.toFixed(1)} s`;

/** The bench's rows, one figure each. */
export function scaleRows(
  bench: string,
  r: {
    missions: number;
    spreadS: number;
    toolS: number;
    started: number;
    refused: Map<number, number>;
    /** Answers tried again (503, or none): a start refused for now, not for good. */
    retried: Map<number, number>;
    lastStartS: number;
    counts: Map<string, number>;
    /** First and last mission end, seconds after the first start. */
    endsS: { first: number; last: number } | undefined;
    tool: { peak: number; peakAtS: number | undefined; calls: number; distinct: number; aborted: number };
    figures: Figures;
    loadBefore: number;
    settings: Record<string, string>;
    errorLines: number[];
    /** The API processes' error log lines: a 500 logs `request failed` with its error. */
    internalErrors: string[];
    /** Failed missions grouped by phase and message, most first. */
    failures: Array<{ phase: string; message: string; n: number }>;
    crashes: number;
  },
): Row[] {
  const f = r.figures;
  const byStatus = (m: Map<number, number>) =>
    [...m].map(([status, n]) => `${n}× ${status === 0 ? 'no answer' : status}`).join(', ') || 'none';
  const refused = byStatus(r.refused);
  const of = (status: string) => r.counts.get(status) ?? 0;
  const ended = of('completed') + of('failed') + of('cancelled');
  const e = r.endsS;
  const row = (figure: string, value: string): Row => ({ bench, figure, value });
  return [
    row(
      `${r.missions} missions over ${r.spreadS} s, ${r.toolS} s tool each; 2 APIs, 3 workers, Temporal cluster: started · refused (after the tries) · answers tried again · last start answered`,
      `${r.started} · ${refused} · ${byStatus(r.retried)} · ${s(r.lastStartS)}`,
    ),
    row(
      'tool calls in flight at the peak (counted at the tool server) · reached after · requests · distinct calls · requests the caller dropped',
      `${r.tool.peak} · ${r.tool.peakAtS === undefined ? '-' : s(r.tool.peakAtS)} · ${r.tool.calls} · ${r.tool.distinct} · ${r.tool.aborted}`,
    ),
    row(
      'completed · failed · cancelled · not ended · first start → first end · → last end · ends per second between',
      `${of('completed')} · ${of('failed')} · ${of('cancelled')} · ${r.started - ended} · ` +
        (e ? `${s(e.first)} · ${s(e.last)} · ${(ended / Math.max(1, e.last - e.first)).toFixed(1)}` : 'none ended'),
    ),
    row('peak RSS per worker (sampled every second)', f.peak.workerRss.map(mb).join(' · ')),
    row(
      'CPU seconds per worker · both APIs · the bench process (fake model, tool server, clients)',
      `${f.used.workers.map(cpuS).join(' · ')} · ${cpuS(f.used.apis)} · ${cpuS(f.used.bench)}`,
    ),
    row(
      'Temporal history service: CPU seconds · peak RSS · all four services CPU seconds',
      f.found.history
        ? `${cpuS(f.used.history)} · ${mb(f.peak.historyRss)} · ${cpuS(f.used.temporal)} (${f.found.services} found)`
        : 'history pid not found',
    ),
    row("Postgres CPU seconds (Temporal's and Cadenza's data)", f.found.postgres ? cpuS(f.used.postgres) : 'postmaster not found'),
    row(
      `machine (${cpus().length} cores, shared): busy CPU seconds · average cores over ${s(f.wallS)} · 1-min load before · peak`,
      `${s(f.used.machine)} · ${(f.used.machine / f.wallS).toFixed(2)} · ${r.loadBefore.toFixed(2)} · ${f.peak.load.toFixed(2)}`,
    ),
    row(
      'CPU seconds per ended mission: Temporal (four services) · Postgres · workers · APIs',
      ended
        ? [f.used.temporal, f.used.postgres, f.used.workers.reduce((x, y) => x + y, 0), f.used.apis]
            .map((x) => (x / ended).toFixed(3))
            .join(' · ')
        : '-',
    ),
    row('error log lines per worker · API and worker processes restarted', `${r.errorLines.join(' · ')} · ${r.crashes}`),
    row('requests answered 500: the errors the APIs logged, most first', causesOf(r.internalErrors) || 'none'),
    row('failed missions: phase · message, most first', r.failures.map((f) => `${f.n}× ${f.phase}: ${f.message}`).join(' | ') || 'none'),
    row(
      'settings raised for the bench',
      Object.entries(r.settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    ),
  ];
}

/** The distinct errors of `request failed` log lines (pino JSON), counted, the four most frequent. */
export function causesOf(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    if (!line.includes('"request failed"')) continue;
    let err: { type?: string; code?: string; message?: string } | undefined;
    try {
      err = (JSON.parse(line) as { err?: typeof err }).err;
    } catch {
      continue;
    }
    const what = `${err?.type ?? 'Error'}${err?.code ? ` ${err.code}` : ''}: ${(err?.message ?? '').slice(0, 100)}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([what, n]) => `${n}× ${what}`)
    .join(' | ');
}
