import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TICKS_PER_S = 100; // USER_HZ of /proc, 100 on Linux

/** Pids of every live process, with its parent, name and its CPU ticks (own, and of children it reaped). */
function processes(): Array<{ pid: number; ppid: number; comm: string; ticks: number; reaped: number }> {
  return readdirSync('/proc').flatMap((d) => {
    if (!/^\d+$/.test(d)) return [];
    try {
      const raw = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = raw.lastIndexOf(')');
      const f = raw
        .slice(close + 2)
        .split(' ')
        .map(Number);
      return [
        { pid: Number(d), ppid: f[1]!, comm: raw.slice(raw.indexOf('(') + 1, close), ticks: f[11]! + f[12]!, reaped: f[13]! + f[14]! },
      ];
    } catch {
      return []; // gone meanwhile
    }
  });
}

const cmdline = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

export const mb = (b: number) => `${Math.round(b / 2 ** 20)} MB`;

/** RSS (bytes) and CPU seconds of one process, from /proc; zeros once it is gone. */
export function readProc(pid: number): { rss: number; cpuS: number } {
  try {
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = raw
      .slice(raw.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return { rss, cpuS: (f[11]! + f[12]!) / TICKS_PER_S };
  } catch {
    return { rss: 0, cpuS: 0 };
  }
}

/** A process's RSS at the start, and its peak sampled every second until `stop()` (which also reads the end). */
export function rssSampler(pid: number) {
  const start = readProc(pid).rss;
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, readProc(pid).rss)), 1_000);
  return {
    start,
    stop: () => (clearInterval(timer), { peak, end: readProc(pid).rss }),
  };
}

/** CPU seconds of a process and its children so far (Postgres: the postmaster and its backends, live and ended). */
export function treeCpuSeconds(root: number): number {
  const all = processes();
  const self = all.find((p) => p.pid === root);
  if (!self) return 0;
  return (self.ticks + self.reaped + all.filter((p) => p.ppid === root).reduce((a, p) => a + p.ticks, 0)) / TICKS_PER_S;
}

/** The postmaster listening on `port` (its command line carries `-p PORT`). */
export function postgresPid(port: number): number | undefined {
  return processes().find((p) => p.comm === 'postgres' && cmdline(p.pid).join(' ').includes(`-p ${port} `))?.pid;
}

/**
 * The pid of one service of the Temporal cluster whose frontend is at `address`: the temporal-server process started
 * with `--service NAME` whose `--root` holds a config naming that frontend port (other clusters may run beside it).
 * Read from /proc so that the cluster's own handle (testkit/chaos/temporal-cluster.ts) needs nothing added.
 */
export function clusterServicePid(address: string, service: string): number | undefined {
  const port = address.split(':').pop()!;
  return processes().find((p) => {
    const args = cmdline(p.pid);
    if (!args[0]?.endsWith('temporal-server') || args[args.indexOf('--service') + 1] !== service) return false;
    try {
      const config = readFileSync(join(args[args.indexOf('--root') + 1]!, 'config', 'development.yaml'), 'utf8');
      return new RegExp(`frontend:\\s*\\n\\s*rpc: \\{ grpcPort: ${port},`).test(config);
    } catch {
      return false;
    }
  })?.pid;
}

/** Busy CPU seconds of the whole machine so far (all but idle and iowait), from /proc/stat. */
export function machineCpuSeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return (cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!) / TICKS_PER_S;
}
