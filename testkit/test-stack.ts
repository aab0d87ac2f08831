import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { loadConfig, type Config } from '../config/config.ts';
import { startFakeModelServer, type FakeModelServer } from '../fake-model/fake-model-server.ts';
import { buildApi } from '../wiring/build-api.ts';
import { buildWorker } from '../wiring/build-worker.ts';
import { openResources } from '../wiring/resources.ts';
import type { LivePublisher } from '../contracts/events.ts';
import { missionWorkflowId } from '../contracts/mission.ts';
import { createApiClient } from './api-client.ts';
import { createEmptyTestDatabase } from './test-database.ts';
import { startToolServer, type ToolServer } from './tool-server.ts';

export const LAB_APPS_DIR = fileURLToPath(new URL('../test/fixtures/apps', import.meta.url));

export type StackOptions = {
  provider?: 'anthropic' | 'openai';
  /** Start the in-process worker (default true); false when a test runs its own worker process. */
  worker?: boolean;
  /** Variables over the stack's own; a function is given the fake model server (for a second endpoint on it). */
  env?: Record<string, string> | ((model: FakeModelServer) => Record<string, string>);
  /** A Temporal server of the test's own (default: the suite's shared dev server). */
  temporalAddress?: string;
  /** A Postgres database of the test's own, left in place on stop (default: a fresh database, dropped on stop). */
  databaseUrl?: string;
  /** How often idle SSE streams send a keep-alive comment (default 1 s, so tests see them). */
  sseKeepAliveMs?: number;
  /** Receives every log line (default: stderr). */
  logWrite?: (line: string) => void;
  /** Where the worker publishes live events (tool progress, streamed text). */
  live?: LivePublisher;
  /** Tracing on, its spans going here (an in-memory exporter) the way production's go over OTLP. */
  spanExporter?: SpanExporter;
  /** The worker's workflow bundle (default: the suite's, built without tracing). */
  workflowBundle?: WorkflowBundleOption;
  /** False: the worker only announces events and the relay reads them by the query (bench/push-vs-query.ts). */
  pushEvents?: boolean;
};

/**
 * A whole Cadenza on real services, wired by the same builders as the processes (wiring/): a fresh database on the
 * test Postgres, the shared Temporal dev server with task queues of its own, the fake model server, the scriptable
 * tool server, a worker and the API on port 0.
 */
export async function startTestStack(opts: StackOptions = {}) {
  const address = opts.temporalAddress ?? process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run the tests through scripts/test.sh');
  const database = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => {} } : await createEmptyTestDatabase();
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
    WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'error',
    LOG_FORMAT: 'json',
    SECRETS_MASTER_KEY: randomBytes(32).toString('base64'),
    ...(typeof opts.env === 'function' ? opts.env(model) : opts.env),
  };
  const config: Config = loadConfig(env);
  // Every line the process logs, kept so a test can search them (for a secret that must not appear, say).
  const logLines: string[] = [];
  const logWrite =
    opts.logWrite ??
    ((line: string) => {
      if (JSON.parse(line).level === 'error') process.stderr.write(line + '\n');
    });
  const resources = await openResources(config, {
    processSignals: false,
    ...(opts.spanExporter ? { spanExporter: opts.spanExporter } : {}),
    logWrite: (line) => {
      logLines.push(line);
      logWrite(line);
    },
  });
  const suiteBundle = process.env.CADENZA_TEST_BUNDLE;
  const bundle = opts.workflowBundle ?? (suiteBundle ? { codePath: suiteBundle } : undefined);
  const worker =
    opts.worker === false
      ? undefined
      : await buildWorker(resources, {
          temporalAddress: address,
          env,
          ...(bundle ? { workflowBundle: bundle } : {}),
          ...(opts.live ? { live: opts.live } : {}),
          ...(opts.pushEvents === false ? { pushEvents: false } : {}),
        });
  const built = await buildApi(resources, {
    temporalAddress: address,
    env,
    port: 0,
    host: '127.0.0.1',
    sseKeepAliveMs: opts.sseKeepAliveMs ?? 1_000,
    drainMs: 100,
  });
  const api = createApiClient(built.url, adminKey);
  return {
    config,
    env,
    logLines,
    registry: resources.registry,
    secrets: resources.secrets,
    tracing: resources.tracing,
    logger: resources.logger,
    db: resources.database.db,
    vectors: resources.vectors,
    notifications: resources.database.notifications,
    model,
    tools,
    temporal: built.temporal,
    worker,
    app: built.app,
    relay: built.relay,
    url: built.url,
    api,
    handle: (missionId: string) => built.temporal.workflow.getHandle(missionWorkflowId(missionId)),
    /** Runs the process's own ordered shutdown (HTTP, Temporal client, worker, database), then the test services. */
    async stop() {
      const code = await resources.shutdown.shutdown('test stack stopped');
      await Promise.all([model.close(), tools.close()]);
      await database.drop();
      if (code !== 0) throw new Error('a shutdown step of the test stack failed (see the error log line)');
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
