import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../wiring/worker-process.ts';

const WORKER_BIN = fileURLToPath(new URL('../../bin/worker.ts', import.meta.url));

/** The production worker (bin/worker.ts, launched as production launches it) as a child process, resolved once it logs that it is running. */
export async function spawnWorker(
  env: Record<string, string>,
  /** Called with the child at once, before it is running (it may poll tasks before this resolves). */
  onSpawn?: (child: ChildProcess) => void,
): Promise<{ child: ChildProcess; kill(signal?: NodeJS.Signals): Promise<number | null> }> {
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, WORKER_BIN], {
    env: { ...process.env, ...WORKER_PROCESS_ENV, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  onSpawn?.(child);
  // A failing test must not leave a worker behind (the runner would wait on it forever).
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  let log = '';
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker did not start:\n${log}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      if (log.includes('"worker running"')) {
        clearTimeout(timer);
        ok();
      }
    });
    void exited.then((code) => fail(new Error(`worker exited with ${code}:\n${log}`)));
  });
  void exited.then(() => process.off('exit', reap));
  child.unref();
  (child.stderr as unknown as { unref(): void }).unref();
  return {
    child,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      child.kill(signal);
      return exited;
    },
  };
}

/** The workers a test spawns, so its `after` can kill whichever still run (a failed test must not leave one). */
export function spawnedWorkers() {
  const spawned: Array<Awaited<ReturnType<typeof spawnWorker>>> = [];
  return {
    async spawn(env: Record<string, string>) {
      const w = await spawnWorker(env);
      spawned.push(w);
      return w;
    },
    async killAll(): Promise<void> {
      await Promise.all(spawned.filter((w) => w.child.exitCode === null && w.child.signalCode === null).map((w) => w.kill('SIGKILL')));
    },
  };
}
