import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ of /proc, 100 on Linux

/**
 * CPU seconds used over a measured stretch of `wallS` seconds: this process (JS, libuv and the Temporal core
 * threads), the Temporal dev server it spawned, the test Postgres cluster, and the whole machine.
 */
export type CpuUse = { wallS: number; processS: number; temporalS: number; postgresS: number; machineS: number };

type Stat = { pid: number; comm: string; ppid: number; ticks: number; reapedTicks: number };

function stat(pid: number): Stat | undefined {
  return statOf(`/proc/${pid}/stat`);
}

function statOf(path: string): Stat | undefined {
  try {
    const raw = readFileSync(path, 'utf8');
    const close = raw.lastIndexOf(')');
    const f = raw
      .slice(close + 2)
      .split(' ')
      .map(Number); // fields from the 3rd (state) on
    return {
      pid: Number(raw.slice(0, raw.indexOf(' '))),
      comm: raw.slice(raw.indexOf('(') + 1, close),
      ppid: f[1]!,
      ticks: f[11]! + f[12]!,
      reapedTicks: f[13]! + f[14]!,
    };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** CPU seconds (user + system) one process has used so far, from /proc; 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  return (stat(pid)?.ticks ?? 0) / TICKS_PER_S;
}

/**
 * CPU seconds each thread of a process has used so far, summed by thread name (`node` is the main thread, where
 * JavaScript runs; V8's GC helpers, libuv's pool and native threads have names of their own).
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const s = statOf(`/proc/${pid}/task/${tid}/stat`);
    if (s) out.set(s.comm, (out.get(s.comm) ?? 0) + s.ticks / TICKS_PER_S);
  }
  return out;
}

function allProcesses(): Stat[] {
  return readdirSync('/proc').flatMap((d) => (/^\d+$/.test(d) ? (stat(Number(d)) ?? []) : []));
}

/** Ticks of a process, of its children reaped so far, and of its live children. */
function treeTicks(root: number | undefined, procs: Stat[]): number {
  if (root === undefined) return 0;
  const self = procs.find((p) => p.pid === root);
  const children = procs.filter((p) => p.ppid === root).reduce((a, p) => a + p.ticks, 0);
  return self ? self.ticks + self.reapedTicks + children : 0;
}

function roots(procs: Stat[]): { temporal?: number; postgres?: number } {
  const temporal = procs.find((p) => p.ppid === process.pid && p.comm === 'temporal')?.pid;
  const port = process.env.TEST_DATABASE_URL ? new URL(process.env.TEST_DATABASE_URL).port : '';
  const postgres = procs.find((p) => {
    if (p.comm !== 'postgres' || !port) return false;
    try {
      return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').join(' ').includes(`-p ${port} `);
    } catch {
      return false;
    }
  })?.pid;
  return { ...(temporal ? { temporal } : {}), ...(postgres ? { postgres } : {}) };
}

function sample() {
  const procs = allProcesses();
  const { temporal, postgres } = roots(procs);
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const { user, system } = process.cpuUsage();
  return {
    wallS: performance.now() / 1000,
    processS: (user + system) / 1e6,
    temporalS: treeTicks(temporal, procs) / TICKS_PER_S,
    postgresS: treeTicks(postgres, procs) / TICKS_PER_S,
    machineS: (cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!) / TICKS_PER_S, // all but idle and iowait
  };
}

/** Starts measuring; the returned function gives the CPU used since then. */
export function cpuMeter(): () => CpuUse {
  const start = sample();
  return () => {
    const end = sample();
    const d = (k: keyof CpuUse) => end[k] - start[k];
    return { wallS: d('wallS'), processS: d('processS'), temporalS: d('temporalS'), postgresS: d('postgresS'), machineS: d('machineS') };
  };
}

/** Average cores used: process, Temporal, Postgres, machine, as "a · b · c · d of N". */
export function formatCores(u: CpuUse, cores: number): string {
  return [u.processS, u.temporalS, u.postgresS, u.machineS].map((s) => (s / u.wallS).toFixed(2)).join(' · ') + ` of ${cores}`;
}
