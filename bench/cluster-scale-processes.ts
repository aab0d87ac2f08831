import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A Cadenza process of the cluster bench (bin/api.ts, bin/worker.ts), its every log line kept in the run's log file. */
export type LoggedProcess = {
  name: string;
  /** The OS process id of the current child (for /proc readings, and Temporal's worker identity `<pid>@<host>`). */
  readonly pid: number | undefined;
  /** Every pid this process has had (a restarted child is a new one). */
  readonly pids: readonly number[];
  /** Times the process ended without being told to, and was restarted. */
  readonly crashes: number;
  /** Log lines at level error. */
  errorLines(): string[];
  stop(): Promise<void>;
};

/**
 * The run's process log: every line of every process, prefixed with the process's name, so a failure found after the
 * run (a mission's model call timed out three times) can be read against what the processes said at the time. The
 * cluster bench launches its processes as testkit/chaos/service-process.ts does (restarted when they die), but keeps
 * every line on disk rather than the error lines in memory.
 */
export function createProcessLog(path: string) {
  const out: WriteStream = createWriteStream(path, { flags: 'a' });
  return {
    path,
    write: (name: string, line: string) => void out.write(`${name} ${line}\n`),
    close: () => new Promise<void>((ok) => out.end(ok)),
  };
}
export type ProcessLog = ReturnType<typeof createProcessLog>;

/** Starts `node [nodeArgs] bin/<script>` with `env`, resolves once it logs `readyMsg`; its lines go to `log`. */
export async function startLoggedProcess(
  log: ProcessLog,
  name: string,
  script: string,
  env: Record<string, string>,
  readyMsg: string,
  nodeArgs: readonly string[] = [],
): Promise<LoggedProcess> {
  const path = fileURLToPath(new URL(`../bin/${script}`, import.meta.url));
  let child: ChildProcess | undefined;
  let stopping = false;
  let crashes = 0;
  const pids: number[] = [];
  const errors: string[] = [];

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
          log.write(name, line);
          tail = (tail + line + '\n').slice(-4_000);
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
        log.write(name, `[exited: ${code ?? signal}]`);
        if (!ready) return fail(new Error(`${name} exited during start-up (${code ?? signal}):\n${tail}`));
        if (stopping || c !== child) return;
        // Died on its own: restart it, as a process supervisor would.
        crashes++;
        process.stderr.write(`[cluster-scale] ${name} exited by itself (${code ?? signal}); restarting it\n${tail.slice(-800)}\n`);
        void launch().catch((err: unknown) => process.stderr.write(`[cluster-scale] ${name} could not restart: ${String(err)}\n`));
      });
    });
  }

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
    errorLines: () => [...errors],
    async stop() {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((ok) => c.once('exit', () => ok()));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
