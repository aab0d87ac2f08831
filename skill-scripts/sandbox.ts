import { execFile, spawn } from 'node:child_process';
import { lstat, readlink } from 'node:fs/promises';
import type { Duplex, Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import type { ScriptSettings } from '../config/config.ts';
import { bwrapArgs, type HostLayout } from './bwrap-args.ts';
import { serveCallbacks, type ScriptCallHandler } from './callback-pipe.ts';
import type { Interpreter } from './runtimes.ts';
import { createRunCgroup, scriptCgroups, type RunCgroup } from './memory-cgroup.ts';
import { seccompDecision } from './seccomp.ts';

// stderr is for the error message only: its last bytes are kept.
const STDERR_KEEP_BYTES = 8 * 1024;
// Unprivileged uids handed out per run when the server is root: each run's process limit counts that run alone.
const UID_BASE = 1_800_000_000;
const UID_SPAN = 100_000_000;

/** What one sandboxed run needs: the interpreter, the hydrated bundle folder, the script inside it and its input. */
export type SandboxRequest = {
  interpreter: Interpreter;
  bundleDir: string;
  outDir: string;
  scriptPath: string;
  argv: string[];
  stdin: string;
  signal: AbortSignal;
  onCall: ScriptCallHandler;
};

/** How a run ended. `unavailable`: no sandbox could be made, so nothing ran. */
export type SandboxResult =
  | { end: 'exited'; code: number; stdout: string; stderr: string; durationMs: number }
  | { end: 'killed'; signal: string; stderr: string; durationMs: number }
  | { end: 'timeout' | 'output_limit' | 'cancelled'; stderr: string; durationMs: number }
  | { end: 'memory_limit'; over: 'own' | 'total'; stderr: string; durationMs: number }
  | { end: 'unavailable'; reason: string };

export type Sandbox = { run(req: SandboxRequest): Promise<SandboxResult> };

/**
 * Runs scripts under bubblewrap with the limits given, each in a memory cgroup of its own where the worker can make
 * them (else under an address-space limit); refuses (never falls back to running bare) when it cannot.
 */
export function createSandbox(limits: ScriptSettings): Sandbox {
  let host: Promise<{ bwrap: string; layout: HostLayout } | string> | undefined;
  return {
    async run(req) {
      host ??= inspectHost();
      const found = await host;
      if (typeof found === 'string') {
        host = undefined; // installed later: look again next time
        return { end: 'unavailable', reason: found };
      }
      const { filter, refusal } = seccompDecision(limits.requireSeccomp);
      if (refusal) return { end: 'unavailable', reason: refusal };
      const dropToUid = process.getuid?.() === 0 ? UID_BASE + Math.floor(Math.random() * UID_SPAN) : undefined;
      const cgroups = await scriptCgroups(limits.memoryTotalBytes);
      let cgroup: RunCgroup | undefined;
      try {
        cgroup = typeof cgroups === 'string' ? undefined : await createRunCgroup(cgroups, limits.memoryBytes);
      } catch (err) {
        return { end: 'unavailable', reason: `its memory cgroup could not be created (${(err as Error).message})` };
      }
      const addressSpaceBytes = cgroup ? undefined : limits.memoryBytes;
      const args = bwrapArgs({ ...req, layout: found.layout, limits, addressSpaceBytes, dropToUid, seccomp: filter !== undefined });
      try {
        return await runProcess(found.bwrap, args, req, limits, filter, cgroup);
      } finally {
        await cgroup?.remove();
      }
    },
  };
}

function runProcess(
  bwrap: string,
  args: string[],
  req: SandboxRequest,
  limits: ScriptSettings,
  filter: Buffer | undefined,
  cgroup: RunCgroup | undefined,
): Promise<SandboxResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // No variable of the server's environment reaches bubblewrap (and --clearenv empties the sandbox's). Descriptor 3
    // is the callback pipe, 4 the seccomp filter bubblewrap reads. With a cgroup, a shell joins it before it becomes
    // bubblewrap (exec), so nothing of the run is ever outside it.
    const [command, argv] = cgroup ? ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procs, bwrap, ...args]] : [bwrap, args];
    const child = spawn(command, argv, { env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const [stdin, stdout, stderr, pipe, seccomp] = child.stdio as unknown as [Writable, Readable, Readable, Duplex, Writable];
    seccomp.on('error', () => {});
    seccomp.end(filter ?? Buffer.alloc(0));
    let ended: 'timeout' | 'output_limit' | 'cancelled' | undefined;
    let out: Buffer[] = [];
    let outBytes = 0;
    let err = Buffer.alloc(0);
    const kill = (why: typeof ended) => {
      ended ??= why;
      // bubblewrap's child dies with it (--die-with-parent), and with the PID namespace's init every process inside.
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill('timeout'), limits.timeoutS * 1000);
    const onAbort = () => kill('cancelled');
    req.signal.addEventListener('abort', onAbort, { once: true });
    if (req.signal.aborted) onAbort();
    stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > limits.maxOutputBytes) return kill('output_limit');
      out.push(chunk);
    });
    stderr.on('data', (chunk: Buffer) => {
      err = Buffer.concat([err, chunk]);
      if (err.length > STDERR_KEEP_BYTES) err = err.subarray(err.length - STDERR_KEEP_BYTES);
    });
    const callbacks = serveCallbacks(pipe, req.onCall, limits.maxToolCalls);
    stdin.on('error', () => {}); // a script that never reads its input closes the pipe early
    stdin.end(req.stdin);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ end: 'unavailable', reason: `bubblewrap could not be started (${e.message})` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onAbort);
      const durationMs = Date.now() - started;
      const tail = err.toString('utf8');
      const printed = Buffer.concat(out).toString('utf8');
      out = [];
      void Promise.all([callbacks.settled(), cgroup?.memoryEnd()]).then(([, over]) => {
        // bubblewrap reports its own set-up failures as `bwrap: …` with status 1, before anything of the script ran.
        if (ended === undefined && code === 1 && printed === '' && tail.startsWith('bwrap: '))
          return resolve({ end: 'unavailable', reason: `the sandbox could not be created: ${tail.trim()}` });
        if (ended) return resolve({ end: ended, stderr: tail, durationMs });
        if (over) return resolve({ end: 'memory_limit', over, stderr: tail, durationMs });
        // bubblewrap exits with 128 + n when the script died of signal n.
        if (signal !== null) return resolve({ end: 'killed', signal, stderr: tail, durationMs });
        if (code !== null && code > 128) return resolve({ end: 'killed', signal: signalName(code - 128), stderr: tail, durationMs });
        resolve({ end: 'exited', code: code ?? 1, stdout: printed, stderr: tail, durationMs });
      });
    });
  });
}

const SIGNALS: Record<number, string> = { 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 15: 'SIGTERM', 24: 'SIGXCPU', 25: 'SIGXFSZ' };
const signalName = (n: number) => SIGNALS[n] ?? `signal ${n}`;

/** Finds bubblewrap and how the host lays out /bin, /lib…; a string says why no sandbox can be made. */
async function inspectHost(): Promise<{ bwrap: string; layout: HostLayout } | string> {
  let bwrap: string;
  try {
    bwrap = (await promisify(execFile)('sh', ['-c', 'command -v bwrap'])).stdout.trim();
  } catch {
    return 'bubblewrap (bwrap) is not installed; scripts run only in its sandbox (install the bubblewrap package)';
  }
  const layout: HostLayout = { links: [], dirs: [] };
  for (const path of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    const stat = await lstat(path).catch(() => undefined);
    if (stat?.isSymbolicLink()) layout.links.push({ path, target: await readlink(path) });
    else if (stat?.isDirectory()) layout.dirs.push(path);
  }
  return { bwrap, layout };
}
