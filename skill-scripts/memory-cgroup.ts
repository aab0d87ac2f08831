import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resident-memory limits for scripts through the kernel's memory controller: under the worker's own cgroup, one
 * parent cgroup per worker process holds SCRIPT_MEMORY_TOTAL_MB for all its scripts together, and each run gets a
 * child cgroup with SCRIPT_MEMORY_MB and no swap. The kernel kills a script (OOM) that goes over either. cgroup v2
 * (`memory.max`, `memory.swap.max`) or v1 (`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes`), whichever holds
 * the memory controller. A string says why there are none (the sandbox then limits address space instead).
 */
export type ScriptCgroups = { version: 1 | 2; parent: string };

/** One run's cgroup: the file a process writes its pid to, how the run ended for memory, and its removal. */
export type RunCgroup = { procs: string; memoryEnd(): Promise<'own' | 'total' | undefined>; remove(): Promise<void> };

const FILES = {
  1: { max: 'memory.limit_in_bytes', swap: 'memory.memsw.limit_in_bytes', events: 'memory.oom_control', peak: 'memory.max_usage_in_bytes' },
  2: { max: 'memory.max', swap: 'memory.swap.max', events: 'memory.events', peak: 'memory.peak' },
} as const;

// The kernel charges memory in small batches: a peak this close to the limit reached it.
const NEAR_LIMIT = 1024 * 1024;

const prepared = new Map<number, Promise<ScriptCgroups | string>>();

/** This process's parent cgroup for scripts, made once per total (every runner of the worker shares it). */
export function scriptCgroups(totalBytes: number, fsRoot = '/sys/fs/cgroup'): Promise<ScriptCgroups | string> {
  let found = prepared.get(totalBytes);
  if (!found) {
    found = prepare(totalBytes, fsRoot).catch((err: Error) => `the worker cannot create memory cgroups (${err.message})`);
    prepared.set(totalBytes, found);
  }
  return found;
}

async function prepare(totalBytes: number, fsRoot: string): Promise<ScriptCgroups | string> {
  const own = (await readFile('/proc/self/cgroup', 'utf8')).split('\n').map((l) => l.split(':'));
  const v1 = own.find(([, controllers]) => controllers?.split(',').includes('memory'));
  let version: 1 | 2;
  let base: string;
  if (v1) [version, base] = [1, join(fsRoot, 'memory', v1[2]!)];
  else {
    const unified = own.find(([id]) => id === '0')?.[2];
    const mount = (await exists(join(fsRoot, 'cgroup.controllers'))) ? fsRoot : join(fsRoot, 'unified');
    if (unified === undefined) return 'no memory controller in /proc/self/cgroup';
    [version, base] = [2, join(mount, unified)];
    const controllers = await readFile(join(base, 'cgroup.controllers'), 'utf8').catch(() => '');
    if (!controllers.split(/\s+/).includes('memory')) return `the memory controller is not delegated to ${base}`;
    // Fails (EBUSY) where the worker's own cgroup holds processes and is not the root: give it a delegated subtree.
    await writeFile(join(base, 'cgroup.subtree_control'), '+memory');
  }
  await removeStale(base);
  // Named by process and total: runners of one process with another total (tests) never share a limit.
  const parent = join(base, `cadenza-scripts-${process.pid}-${totalBytes}`);
  await mkdir(parent, { recursive: true });
  if (version === 2) await writeFile(join(parent, 'cgroup.subtree_control'), '+memory');
  await limit(version, parent, totalBytes);
  return { version, parent };
}

/** A fresh cgroup for one run under the worker's parent, limited to `bytes` resident and no swap. */
export async function createRunCgroup(cgroups: ScriptCgroups, bytes: number): Promise<RunCgroup> {
  const { version, parent } = cgroups;
  const dir = join(parent, `run-${randomBytes(6).toString('hex')}`);
  await mkdir(dir);
  await limit(version, dir, bytes);
  const counter = async (path: string, name: string) => {
    const text = await readFile(join(path, FILES[version].events), 'utf8').catch(() => '');
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };
  return {
    procs: join(dir, 'cgroup.procs'),
    async memoryEnd() {
      if ((await counter(dir, 'oom_kill')) === 0) return undefined;
      // Killed below its own limit, the run was the victim of the total (the parent's limit) being reached.
      const peak = Number(await readFile(join(dir, FILES[version].peak), 'utf8').catch(() => '0'));
      return peak >= bytes - NEAR_LIMIT ? 'own' : 'total';
    },
    async remove() {
      // The processes are gone, but the kernel may still be tearing them down for a moment.
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          return await rmdir(dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return;
          await sleep(20);
        }
      }
    },
  };
}

/** Parents left by worker processes that are gone (an empty cgroup is removed with rmdir, children first). */
async function removeStale(base: string): Promise<void> {
  for (const name of await readdir(base).catch(() => [])) {
    const pid = /^cadenza-scripts-(\d+)-\d+$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
    const dir = join(base, name);
    for (const run of await readdir(dir).catch(() => [])) if (run.startsWith('run-')) await rmdir(join(dir, run)).catch(() => {});
    await rmdir(dir).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The memory limit, then no swap beyond it (v1 counts memory + swap together, so it is set to the same figure). */
async function limit(version: 1 | 2, dir: string, bytes: number): Promise<void> {
  await writeFile(join(dir, FILES[version].max), String(bytes));
  const swap = join(dir, FILES[version].swap);
  if (await exists(swap)) await writeFile(swap, version === 1 ? String(bytes) : '0');
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
