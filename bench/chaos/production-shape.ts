import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTemporalCli } from '../../temporal/resolve-cli.ts';
import { startFakeModelServer, type FakeModelServer } from '../../fake-model/fake-model-server.ts';
import { startDevServer, type DevServer } from '../../temporal/dev-server.ts';
import { freePort } from '../../test/helpers/free-port.ts';
import { startOwnPostgres, type OwnPostgres } from '../../test/helpers/own-postgres.ts';
import { startToolServer, type ToolServer } from '../../test/helpers/tool-server.ts';
import { startService, type ServiceProcess } from './service-process.ts';

const APPS_DIR = fileURLToPath(new URL('../../test/fixtures/apps', import.meta.url));

/**
 * Cadenza as it is deployed, every part its own process: a Postgres cluster, a Temporal dev server (state in a
 * SQLite file, so it survives its own restarts), the API (bin/api.ts) and two workers (bin/worker.ts); the fake model
 * server and the tool server run in this process, on loopback.
 */
export async function startProductionShape(log: (line: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-chaos-'));
  log('starting Postgres');
  const postgres: OwnPostgres = await startOwnPostgres();
  const databaseUrl = await postgres.createDatabase('cadenza');
  log('starting the Temporal dev server');
  const temporalPort = await freePort();
  const dbFile = join(dir, 'temporal.sqlite');
  const cliPath = resolveTemporalCli();
  let temporal: DevServer | undefined = await startDevServer({ cliPath, port: temporalPort, dbFile });
  const model: FakeModelServer = await startFakeModelServer();
  const tools: ToolServer = await startToolServer();
  const adminKey = `adm_${randomBytes(16).toString('hex')}`;
  const apiPort = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'chaos',
    APPS_DIR,
    LAB_TOOLS_URL: tools.url,
    MODEL_PROVIDER: 'anthropic',
    MODEL_BASE_URL: model.anthropicBaseUrl,
    MODEL_API_KEY: 'chaos-key',
    CADENZA_ADMIN_KEY: adminKey,
    SHUTDOWN_GRACE_SECONDS: '2',
    LOG_LEVEL: 'info',
  };
  log('starting the API and two workers');
  const api: ServiceProcess = await startService('api', 'api.ts', { ...env, PORT: String(apiPort) }, 'api listening');
  const workers: ServiceProcess[] = [];
  for (const n of [1, 2]) workers.push(await startService(`worker-${n}`, 'worker.ts', env, 'worker running'));

  return {
    url: `http://127.0.0.1:${apiPort}`,
    adminKey,
    postgres,
    model,
    tools,
    api,
    workers,
    temporalAddress: temporal.address,
    async stopTemporal() {
      await temporal?.stop();
      temporal = undefined;
    },
    async startTemporal() {
      temporal = await startDevServer({ cliPath, port: temporalPort, dbFile });
    },
    async stop() {
      for (const s of [api, ...workers]) await s.stop().catch(() => {});
      await temporal?.stop();
      await Promise.all([model.close(), tools.close()]);
      await postgres.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type ProductionShape = Awaited<ReturnType<typeof startProductionShape>>;
