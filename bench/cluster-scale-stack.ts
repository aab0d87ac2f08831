import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeModelServer } from '../fake-model/fake-model-server.ts';
import { startTemporalCluster } from '../testkit/chaos/temporal-cluster.ts';
import { freePort } from '../testkit/free-port.ts';
import { startOwnPostgres } from '../testkit/own-postgres.ts';
import { startToolServer } from '../testkit/tool-server.ts';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../wiring/worker-process.ts';
import { startService, type ServiceProcess } from '../testkit/chaos/service-process.ts';
import { createProcessLog } from './cluster-scale-processes.ts';

const APPS_DIR = fileURLToPath(new URL('./fixtures/apps', import.meta.url));

/**
 * The production shape of issue 36 for bench/cluster-scale.ts, every part its own process: a Postgres cluster (both
 * Temporal's data and Cadenza's), the real Temporal server as four service processes on it (testkit/chaos/
 * temporal-cluster.ts), `apis` API processes and `workers` worker processes (each serving the mission, model and tool
 * queues, launched as production launches them); the fake model and the tool server in this process. Built here
 * rather than through testkit/chaos/production-shape.ts, which starts a fixed two workers on the test fixtures' apps.
 * `env` adds to every Cadenza process's environment (the limits the bench raises). Every line the API and worker
 * processes log is kept in `processLog.path` (a directory of the run's own, which the stop leaves in place).
 */
export async function startClusterScaleStack(
  log: (line: string) => void,
  opts: { apis: number; workers: number; env: Record<string, string> },
) {
  const started: Array<{ stop(): Promise<unknown> }> = [];
  const processLog = createProcessLog(join(mkdtempSync(join(tmpdir(), 'cadenza-cluster-scale.')), 'processes.log'));
  started.push({ stop: () => processLog.close() });
  const stopAll = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => {});
  };
  try {
    log('starting Postgres');
    const postgres = await startOwnPostgres();
    started.push({ stop: () => postgres.destroy() });
    const databaseUrl = await postgres.createDatabase('cadenza');
    log('starting the Temporal cluster (four services on Postgres)');
    const cluster = await startTemporalCluster({ port: postgres.port, user: 'postgres' }, log);
    started.push(cluster);
    const model = await startFakeModelServer();
    const tools = await startToolServer();
    started.push({ stop: () => Promise.all([model.close(), tools.close()]) });
    const adminKey = `adm_${randomBytes(16).toString('hex')}`;
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_TASK_QUEUE: 'scale',
      APPS_DIR,
      LAB_TOOLS_URL: tools.url,
      MODEL_PROVIDER: 'anthropic',
      MODEL_BASE_URL: model.anthropicBaseUrl,
      MODEL_API_KEY: 'bench-key',
      CADENZA_ADMIN_KEY: adminKey,
      SHUTDOWN_GRACE_SECONDS: '2',
      LOG_LEVEL: 'info',
      ...opts.env,
    };
    log(`starting ${opts.apis} API and ${opts.workers} worker processes`);
    const apis: Array<{ process: ServiceProcess; url: string }> = [];
    for (let n = 1; n <= opts.apis; n++) {
      const port = await freePort();
      const name = `api-${n}`;
      const api = await startService(name, 'api.ts', { ...env, PORT: String(port) }, 'api listening', [], (line) =>
        processLog.write(name, line),
      );
      started.push(api);
      apis.push({ process: api, url: `http://127.0.0.1:${port}` });
    }
    const workers: ServiceProcess[] = [];
    for (let n = 1; n <= opts.workers; n++) {
      const name = `worker-${n}`;
      const worker = await startService(name, 'worker.ts', { ...env, ...WORKER_PROCESS_ENV }, 'worker running', WORKER_NODE_FLAGS, (line) =>
        processLog.write(name, line),
      );
      started.push(worker);
      workers.push(worker);
    }
    return { postgres, databaseUrl, cluster, model, tools, adminKey, apis, workers, processLog, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
export type ClusterScaleStack = Awaited<ReturnType<typeof startClusterScaleStack>>;
