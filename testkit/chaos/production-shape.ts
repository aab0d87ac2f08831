import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTemporalCli } from '../../temporal/resolve-cli.ts';
import { startFakeModelServer, type FakeModelServer } from '../../fake-model/fake-model-server.ts';
import { startDevServer, type DevServer } from '../../temporal/dev-server.ts';
import { freePort } from '../free-port.ts';
import { startOwnPostgres, type OwnPostgres } from '../own-postgres.ts';
import { startToolServer, type ToolServer } from '../tool-server.ts';
import { startService, type ServiceProcess } from './service-process.ts';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../wiring/worker-process.ts';
import { startTemporalCluster, type TemporalCluster } from './temporal-cluster.ts';

const APPS_DIR = fileURLToPath(new URL('../../test/fixtures/apps', import.meta.url));

/** Production's worker processes: one per task queue, each scaled apart (WORKER_QUEUES). */
export const WORKER_PER_QUEUE = ['missions', 'model', 'tools'] as const;

/**
 * Cadenza as it is deployed, every part its own process: a Postgres cluster, a Temporal dev server (state in a
 * SQLite file, so it survives its own restarts), the API (bin/api.ts; `apis` of them, default 1) and the workers
 * (bin/worker.ts; one per entry of `workers`, each serving those WORKER_QUEUES; default two serving all three); the
 * fake model server and the tool server run in this process, on loopback. `env` adds to every Cadenza process's
 * environment (limits, say). With `cluster`, the real Temporal server runs instead of the dev server: four service
 * processes on the same Postgres (both Temporal's data and Cadenza's), each of which a scenario may kill, and its Web
 * UI; with `cluster.tls`, its frontend serves TLS and Cadenza's processes trust its CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH).
 */
export async function startProductionShape(
  log: (line: string) => void,
  opts: { apis?: number; workers?: readonly string[]; env?: Record<string, string>; cluster?: boolean | { tls: boolean } } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-chaos-'));
  log('starting Postgres');
  const postgres: OwnPostgres = await startOwnPostgres();
  const databaseUrl = await postgres.createDatabase('cadenza');
  const temporalPort = await freePort();
  const dbFile = join(dir, 'temporal.sqlite');
  const cliPath = resolveTemporalCli();
  let cluster: TemporalCluster | undefined;
  let temporal: DevServer | undefined;
  if (opts.cluster) {
    const tls = typeof opts.cluster === 'object' && opts.cluster.tls;
    log(`starting the Temporal cluster (four services on Postgres${tls ? ', TLS' : ''})`);
    cluster = await startTemporalCluster({ port: postgres.port, user: 'postgres' }, log, { tls });
  } else {
    log('starting the Temporal dev server');
    temporal = await startDevServer({ cliPath, port: temporalPort, dbFile });
  }
  const temporalAddress = cluster?.address ?? temporal!.address;
  const model: FakeModelServer = await startFakeModelServer();
  const tools: ToolServer = await startToolServer();
  const adminKey = `adm_${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: 'chaos',
    APPS_DIR,
    LAB_TOOLS_URL: tools.url,
    MODEL_PROVIDER: 'anthropic',
    MODEL_BASE_URL: model.anthropicBaseUrl,
    MODEL_API_KEY: 'chaos-key',
    CADENZA_ADMIN_KEY: adminKey,
    SHUTDOWN_GRACE_SECONDS: '2',
    LOG_LEVEL: 'info',
    ...(cluster?.caPath ? { TEMPORAL_TLS_SERVER_CA_CERT_PATH: cluster.caPath, TEMPORAL_TLS_SERVER_NAME: 'localhost' } : {}),
    ...(cluster?.uiUrl ? { TEMPORAL_UI_URL: cluster.uiUrl } : {}),
    ...opts.env,
  };
  const workerQueues = opts.workers ?? ['missions,model,tools', 'missions,model,tools'];
  log(`starting ${opts.apis ?? 1} API process(es) and ${workerQueues.length} workers (${workerQueues.join(' · ')})`);
  const apis: Array<{ process: ServiceProcess; url: string }> = [];
  for (let n = 1; n <= (opts.apis ?? 1); n++) {
    const port = await freePort();
    const name = n === 1 ? 'api' : `api-${n}`;
    apis.push({
      process: await startService(name, 'api.ts', { ...env, PORT: String(port) }, 'api listening'),
      url: `http://127.0.0.1:${port}`,
    });
  }
  const api = apis[0]!.process;
  const workers: ServiceProcess[] = [];
  for (const [i, queues] of workerQueues.entries()) {
    const workerEnv = { ...env, ...WORKER_PROCESS_ENV, WORKER_QUEUES: queues };
    workers.push(await startService(`worker-${i + 1}`, 'worker.ts', workerEnv, 'worker running', WORKER_NODE_FLAGS));
  }

  return {
    url: apis[0]!.url,
    /** Every API process's URL (the first is `url`). */
    urls: apis.map((a) => a.url),
    adminKey,
    postgres,
    model,
    tools,
    api,
    workers,
    temporalAddress,
    /** The cluster's services (undefined on the dev server). */
    cluster,
    async stopTemporal() {
      await temporal?.stop();
      temporal = undefined;
    },
    async startTemporal() {
      temporal = await startDevServer({ cliPath, port: temporalPort, dbFile });
    },
    async stop() {
      for (const s of [...apis.map((a) => a.process), ...workers]) await s.stop().catch(() => {});
      await temporal?.stop();
      await cluster?.stop();
      await Promise.all([model.close(), tools.close()]);
      await postgres.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type ProductionShape = Awaited<ReturnType<typeof startProductionShape>>;
