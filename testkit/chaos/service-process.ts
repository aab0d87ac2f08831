import { spawn, type ChildProcess } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A production process of Cadenza (bin/api.ts, bin/worker.ts) run as a child, restarted when it dies, as an orchestrator would. */
export type ServiceProcess = {
  name: string;
  /** The OS process id of the current child (for /proc readings, and Temporal's worker identity `<pid>@<host>`). */
  readonly pid: number | undefined;
  /** Every pid this process has had (a restarted child is a new one). */
  readonly pids: readonly number[];
  /** kill -9, then start a new one at once (counted as a kill, not a crash). */
  kill9AndRespawn(): Promise<void>;
  /** Times the process ended without being told to, and was restarted. */
  readonly crashes: number;
  /** Log lines (JSON) seen since the counter was last reset, by message (none kept when `onLine` takes them). */
  countLog(msg: string): number;
  /** Log lines at level error since the counter was last reset. */
  errorLines(): string[];
  resetLog(): void;
  stop(): Promise<void>;
};

/**
 * Starts `node [nodeArgs] bin/<script>` (or `script` itself when it is an absolute path: another checkout's entry,
 * for a bench's before and after) with `env` and resolves once it logs `readyMsg`. `onLine` takes each line of
 * its log as it comes (`[exited: …]` when a child ends) instead of the lines being kept for `countLog`: a long run's
 * whole log, on disk rather than in memory (bench/cluster-scale-stack.ts).
 */
export async function startService(
  name: string,
  script: string,
  env: Record<string, string>,
  readyMsg: string,
  nodeArgs: readonly string[] = [],
  onLine?: (line: string) => void,
): Promise<ServiceProcess> {
  const path = isAbsolute(script) ? script : fileURLToPath(new URL(`../../bin/${script}`, import.meta.url));
  let child: ChildProcess | undefined;
  let stopping = false;
  let crashes = 0;
  let lines: string[] = [];
  let errors: string[] = [];
  const pids: number[] = [];

  function launch(): Promise<void> {
    const c = spawn(process.execPath, [...nodeArgs, path], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    if (c.pid) pids.push(c.pid);
    let tail = '';
    let ready = false;
    return new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${tail}`)), 90_000);
      let partial = '';
      c.stderr!.on('data', (d: Buffer) => {
        partial += d.toString();
        const complete = partial.split('\n');
        partial = complete.pop() ?? '';
        for (const line of complete) {
          tail = (tail + line + '\n').slice(-4_000);
          if (onLine) onLine(line);
          else lines.push(line);
          if (/"level":(50|60|"error"|"fatal")/.test(line)) errors.push(line);
          if (!ready && line.includes(`"${readyMsg}"`)) {
            ready = true;
            clearTimeout(timer);
            ok();
          }
        }
      });
      c.once('exit', (code, signal) => {
        clearTimeout(timer);
        onLine?.(`[exited: ${code ?? signal}]`);
        if (!ready) return fail(new Error(`${name} exited during start-up (${code ?? signal}):\n${tail}`));
        if (stopping || c !== child) return;
        // Died on its own: restart it, as a process supervisor would.
        crashes++;
        process.stderr.write(`[${name}] exited by itself (${code ?? signal}); restarting it\n${tail.slice(-800)}\n`);
        void launch().catch((err: unknown) => process.stderr.write(`[${name}] could not restart: ${String(err)}\n`));
      });
    });
  }

  const exitOf = (c: ChildProcess) =>
    new Promise<void>((ok) => (c.exitCode !== null || c.signalCode !== null ? ok() : c.once('exit', () => ok())));
  await launch();
  process.once('exit', () => child?.kill('SIGKILL'));
  return {
    name,
    get pid() {
      return child?.pid;
    },
    pids,
    get crashes() {
      return crashes;
    },
    async kill9AndRespawn() {
      const old = child!;
      child = undefined; // its exit is not a crash
      old.kill('SIGKILL');
      await exitOf(old);
      await launch();
    },
    countLog: (msg) => lines.filter((l) => l.includes(`"msg":"${msg}"`)).length,
    errorLines: () => [...errors],
    resetLog: () => {
      lines = [];
      errors = [];
    },
    async stop() {
      stopping = true;
      const c = child;
      if (!c) return;
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
      await exitOf(c);
      clearTimeout(timer);
    },
  };
}
