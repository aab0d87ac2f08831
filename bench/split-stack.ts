import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { missionWorkflowId } from '../contracts/mission.ts';
import { startFakeModelServer } from '../fake-model/fake-model-server.ts';
import { createApiClient } from '../testkit/api-client.ts';
import { startService, type ServiceProcess } from '../testkit/chaos/service-process.ts';
import { freePort } from '../testkit/free-port.ts';
import { createEmptyTestDatabase } from '../testkit/test-database.ts';
import { LAB_APPS_DIR } from '../testkit/test-stack.ts';
import { startToolServer } from '../testkit/tool-server.ts';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../wiring/worker-process.ts';
import type { Profile } from './profile-summary.ts';

/** One Cadenza process of a split stack: its OS process, and its /metrics. */
export type SplitProcess = { service: ServiceProcess; metricsUrl: string };

/**
 * The production shape on the bench's services (bench/README.md): the API (bin/api.ts) in one OS process, one worker
 * (bin/worker.ts, launched as production launches it: wiring/worker-process.ts) in another, on a fresh database of
 * the bench's Postgres and the bench's Temporal dev server; the fake model, the tool server, the Temporal client that
 * reads results and every HTTP client in this process. It offers what a bench's measurement needs of a test stack
 * (bench-kit.ts's BenchStack). `cpuProfDir`: both processes run under `--cpu-prof`, each writing into its own
 * subfolder when it exits (`profiles()` reads them after `stop()`). `onLine` sees every log line of the API and the
 * worker (LOG_LEVEL info: the API logs each request with its duration). `tree`: the processes run another checkout's
 * code (its bin/, its node_modules), the rest stays this one's.
 */
export async function startSplitStack(
  env: Record<string, string> = {},
  opts: {
    cpuProfDir?: string;
    onLine?: (process: 'api' | 'worker', line: string) => void;
    /** Another checkout of Cadenza whose bin/ to run (the code before a change, for an interleaved A/B). */
    tree?: string;
  } = {},
) {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run the bench through scripts/bench.sh');
  const started: Array<{ stop(): Promise<unknown> }> = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => {});
  };
  try {
    const database = await createEmptyTestDatabase();
    started.push({ stop: () => database.drop() });
    const model = await startFakeModelServer();
    const tools = await startToolServer();
    started.push({ stop: () => Promise.all([model.close(), tools.close()]) });
    const [port, metricsPort] = [await freePort(), await freePort()];
    const adminKey = `adm_${randomBytes(16).toString('hex')}`;
    const common: Record<string, string> = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TASK_QUEUE: `bench-${randomBytes(5).toString('hex')}`,
      DATABASE_URL: database.url,
      APPS_DIR: LAB_APPS_DIR,
      MODEL_PROVIDER: 'anthropic',
      MODEL_BASE_URL: model.anthropicBaseUrl,
      MODEL_API_KEY: 'bench-key',
      CADENZA_ADMIN_KEY: adminKey,
      LAB_TOOLS_URL: tools.url,
      SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
      SHUTDOWN_GRACE_SECONDS: '2',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...env,
    };
    const profFlags = (name: string) => {
      if (!opts.cpuProfDir) return [];
      const dir = join(opts.cpuProfDir, name);
      mkdirSync(dir, { recursive: true });
      return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    };
    const lineOf = (name: 'api' | 'worker') => (opts.onLine ? (line: string) => opts.onLine!(name, line) : () => {});
    // The API first: it migrates the fresh database before the worker opens it.
    const entry = (script: string) => (opts.tree ? join(opts.tree, 'bin', script) : script);
    const api = await startService(
      'api',
      entry('api.ts'),
      { ...common, PORT: String(port) },
      'api listening',
      profFlags('api'),
      lineOf('api'),
    );
    started.push(api);
    const worker = await startService(
      'worker',
      entry('worker.ts'),
      { ...common, ...WORKER_PROCESS_ENV, WORKER_METRICS_PORT: String(metricsPort) },
      'worker running',
      [...WORKER_NODE_FLAGS, ...profFlags('worker')],
      lineOf('worker'),
    );
    started.push(worker);
    const connection = await Connection.connect({ address });
    started.push({ stop: () => connection.close() });
    const temporal = new Client({ connection });
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      databaseUrl: database.url,
      api: createApiClient(url, adminKey),
      model,
      tools,
      handle: (missionId: string) => temporal.workflow.getHandle(missionWorkflowId(missionId)),
      processes: {
        api: { service: api, metricsUrl: `${url}/metrics` },
        worker: { service: worker, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` },
      } satisfies Record<string, SplitProcess>,
      stop,
      /** The CPU profile each process wrote when it exited (after `stop()`), by process. */
      profiles(): Record<'api' | 'worker', Profile | undefined> {
        const read = (name: string) => {
          if (!opts.cpuProfDir) return undefined;
          const file = readdirSync(join(opts.cpuProfDir, name)).find((f) => f.endsWith('.cpuprofile'));
          return file ? (JSON.parse(readFileSync(join(opts.cpuProfDir, name, file), 'utf8')) as Profile) : undefined;
        };
        return { api: read('api'), worker: read('worker') };
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
