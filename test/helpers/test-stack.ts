import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { createModelClient } from '../../model/create-model-client.ts';
import { loadConfig, type Config } from '../../config/config.ts';
import { startFakeModelServer, type FakeModelServer } from '../../fake-model/fake-model-server.ts';
import { createLogger } from '../../lib/logger.ts';
import { createEmbeddingsClient } from '../../memory/embeddings-client.ts';
import { createEventRelay } from '../../server/event-relay.ts';
import { createHttpApi } from '../../server/http-api.ts';
import { listen } from '../../server/listen.ts';
import { buildSecretStore } from '../../secrets/build-secret-store.ts';
import { loadAppRegistry } from '../../tools/app-registry.ts';
import { createHealthMonitor } from '../../tools/health.ts';
import { startWorker } from '../../worker/start-worker.ts';
import { missionWorkflowId } from '../../workflows/definitions.ts';
import { createApiClient } from './api-client.ts';
import { createTestDatabase } from './test-database.ts';
import { startToolServer, type ToolServer } from './tool-server.ts';

export const LAB_APPS_DIR = fileURLToPath(new URL('../fixtures/apps', import.meta.url));

export type StackOptions = {
  provider?: 'anthropic' | 'openai';
  /** Start the in-process worker (default true); false when a test runs its own worker process. */
  worker?: boolean;
  env?: Record<string, string>;
};

/**
 * A whole Cadenza on real services: a fresh database on the test Postgres, the shared Temporal dev server with
 * task queues of its own, the fake model server, the scriptable tool server, a worker and the API on port 0.
 */
export async function startTestStack(opts: StackOptions = {}) {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run the tests through scripts/test.sh');
  const database = await createTestDatabase();
  const model: FakeModelServer = await startFakeModelServer();
  const tools: ToolServer = await startToolServer();
  const provider = opts.provider ?? 'anthropic';
  const adminKey = `adm_${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(5).toString('hex')}`,
    DATABASE_URL: database.url,
    APPS_DIR: LAB_APPS_DIR,
    MODEL_PROVIDER: provider,
    MODEL_BASE_URL: provider === 'anthropic' ? model.anthropicBaseUrl : model.openaiBaseUrl,
    MODEL_API_KEY: 'test-key',
    CADENZA_ADMIN_KEY: adminKey,
    LAB_TOOLS_URL: tools.url,
    SHUTDOWN_GRACE_SECONDS: '2',
    LOG_LEVEL: 'error',
    SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
    ...opts.env,
  };
  const config: Config = loadConfig(env);
  // Every line the process logs, kept so a test can search them (for a secret that must not appear, say).
  const logLines: string[] = [];
  const logger = createLogger({
    level: config.logLevel,
    write: (line) => {
      logLines.push(line);
      if (JSON.parse(line).level === 'error') process.stderr.write(line + '\n');
    },
  });
  const registry = await loadAppRegistry(config.appsDir, { logger });
  const secrets = await buildSecretStore({ db: database.db, config, embedded: false, logger });
  const modelClient = createModelClient({ provider: config.model.provider, baseUrl: config.model.baseUrl, apiKey: config.model.apiKey });
  const bundle = process.env.CADENZA_TEST_BUNDLE;
  const worker =
    opts.worker === false
      ? undefined
      : await startWorker({
          config,
          temporalAddress: address,
          db: database.db,
          registry,
          modelClient,
          logger,
          env,
          secrets,
          ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
        });
  const connection = await Connection.connect({ address });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const relay = createEventRelay({ temporal, logger });
  const app = createHttpApi({
    db: database.db,
    temporal,
    config,
    logger,
    registry,
    secrets,
    health: createHealthMonitor({ env }),
    embeddings: config.embeddings ? createEmbeddingsClient(config.embeddings) : undefined,
    relay,
    sseKeepAliveMs: 1_000,
  });
  const http = await listen(app, 0, '127.0.0.1');
  const api = createApiClient(http.url, adminKey);
  return {
    config,
    env,
    logLines,
    registry,
    secrets,
    logger,
    db: database.db,
    model,
    tools,
    temporal,
    worker,
    app,
    relay,
    url: http.url,
    api,
    handle: (missionId: string) => temporal.workflow.getHandle(missionWorkflowId(missionId)),
    async stop() {
      relay.close();
      await http.close(100);
      await worker?.stop();
      await connection.close();
      await Promise.all([model.close(), tools.close()]);
      await database.drop();
    },
  };
}
export type TestStack = Awaited<ReturnType<typeof startTestStack>>;

/** A SKILL.md for tests, with Cadenza's extensions under `metadata` (the form the Agent Skills validator accepts). */
export function skillMd(o: { name: string; tools?: string[]; maxTurns?: number; model?: string; body?: string }): string {
  const lines = ['---', `name: ${o.name}`, `description: Test skill ${o.name}.`];
  if (o.tools?.length) lines.push(`allowed-tools: ${o.tools.join(' ')}`);
  if (o.maxTurns || o.model) lines.push('metadata:');
  if (o.maxTurns) lines.push(`  cadenza-max-turns: "${o.maxTurns}"`);
  if (o.model) lines.push(`  cadenza-model: ${o.model}`);
  lines.push('---', o.body ?? `Use the tools to answer the objective.`, '');
  return lines.join('\n');
}
