import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClient } from '../testkit/api-client.ts';
import { startService, type ServiceProcess } from '../testkit/chaos/service-process.ts';
import { freePort } from '../testkit/free-port.ts';
import { startTestStack } from '../testkit/test-stack.ts';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../wiring/worker-process.ts';
import type { Profile } from './profile-summary.ts';

/** One Cadenza process of a split stack: its name (`api`, `worker 1`, …), its OS process, and its /metrics. */
export type SplitProcess = { name: string; service: ServiceProcess; metricsUrl: string };

/**
 * The production shape on the bench's services (bench/README.md): the API (bin/api.ts) in one OS process, `workers`
 * worker processes (bin/worker.ts, 1 by default, each serving every task queue and with a metrics port of its own,
 * launched as production launches them: wiring/worker-process.ts) in others. What they run on, and the environment
 * they are given, is a test stack's without its worker (testkit/test-stack.ts: a fresh database, migrated, on the
 * bench's Postgres, task queues of its own on the bench's Temporal dev server, the fake model, the tool server, the
 * keys); its fakes, its Temporal client (`handle`) and every HTTP client stay in this process, with its own API idle.
 * It offers what a bench's measurement needs of a test stack (bench-kit.ts's BenchStack). `cpuProfDir`: every process
 * runs under `--cpu-prof`, each writing into its own subfolder when it exits (`profiles()` reads them after `stop()`).
 * `onLine` sees every log line of each process, by its name (LOG_LEVEL info: the API logs each request with its
 * duration). `tree`: the processes run another checkout's code (its bin/, its node_modules), the rest stays this one's.
 */
export async function startSplitStack(
  env: Record<string, string> = {},
  opts: {
    cpuProfDir?: string;
    onLine?: (process: string, line: string) => void;
    /** Another checkout of Cadenza whose bin/ to run (the code before a change, for an interleaved A/B). */
    tree?: string;
    /** Worker processes (default 1). */
    workers?: number;
  } = {},
) {
  const stack = await startTestStack({ worker: false, env: { ...env, LOG_LEVEL: 'info' } });
  const started: ServiceProcess[] = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    await stack.stop();
  };
  try {
    const profFlags = (name: string) => {
      if (!opts.cpuProfDir) return [];
      const dir = join(opts.cpuProfDir, name);
      mkdirSync(dir, { recursive: true });
      return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    };
    const lineOf = (name: string) => (opts.onLine ? (line: string) => opts.onLine!(name, line) : () => {});
    const entry = (script: string) => (opts.tree ? join(opts.tree, 'bin', script) : script);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = await startService(
      'api',
      entry('api.ts'),
      { ...stack.env, PORT: String(port) },
      'api listening',
      profFlags('api'),
      lineOf('api'),
    );
    started.push(api);
    const workers: SplitProcess[] = [];
    for (let i = 1; i <= (opts.workers ?? 1); i++) {
      const name = `worker ${i}`;
      const metricsPort = await freePort();
      const service = await startService(
        name,
        entry('worker.ts'),
        { ...stack.env, ...WORKER_PROCESS_ENV, WORKER_METRICS_PORT: String(metricsPort) },
        'worker running',
        [...WORKER_NODE_FLAGS, ...profFlags(name)],
        lineOf(name),
      );
      started.push(service);
      workers.push({ name, service, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
    }
    const processes: SplitProcess[] = [{ name: 'api', service: api, metricsUrl: `${url}/metrics` }, ...workers];
    return {
      url,
      databaseUrl: stack.env.DATABASE_URL!,
      api: createApiClient(url, stack.env.CADENZA_ADMIN_KEY!),
      model: stack.model,
      tools: stack.tools,
      handle: stack.handle,
      /** The API, then the workers. */
      processes,
      workers: workers.length,
      stop,
      /** The CPU profile each process wrote when it exited (after `stop()`), by process name. */
      profiles(): Record<string, Profile | undefined> {
        const read = (name: string) => {
          if (!opts.cpuProfDir) return undefined;
          const file = readdirSync(join(opts.cpuProfDir, name)).find((f) => f.endsWith('.cpuprofile'));
          return file ? (JSON.parse(readFileSync(join(opts.cpuProfDir, name, file), 'utf8')) as Profile) : undefined;
        };
        return Object.fromEntries(processes.map((p) => [p.name, read(p.name)]));
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
export type SplitStack = Awaited<ReturnType<typeof startSplitStack>>;

/**
 * A process's event-loop delay since the last call, from its /metrics (prom-client's monitorEventLoopDelay, 10 ms
 * resolution, reset at each scrape): p50 · p99 · max in ms. Call once to start a window, once to read it.
 */
export async function loopDelay(metricsUrl: string): Promise<{ p50: number; p99: number; max: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const gauge = (name: string) => Number(new RegExp(`^cadenza_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]) * 1000;
  return { p50: gauge('p50'), p99: gauge('p99'), max: gauge('max') };
}
