import type { Config } from '../config/config.ts';
import { createDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createShutdown, type Shutdown } from '../lib/shutdown.ts';
import { buildEmbeddings } from '../memory/build-embeddings.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { chooseVectorSearch, type VectorSearch } from '../memory/vector-search.ts';
import { buildSecretStore } from '../secrets/build-secret-store.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import { loadAppRegistry, type AppRegistry } from '../tools/app-registry.ts';
import { createMetrics, type Metrics } from '../telemetry/metrics.ts';
import { buildTracing, type Tracing } from '../telemetry/tracing.ts';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** What the API and the worker of one process share, each opened once: the composition root's first floor. */
export type Resources = {
  config: Config;
  logger: Logger;
  /** Every resource below registers its clean-up here as it opens; the builders add theirs on top. */
  shutdown: Shutdown;
  database: DatabaseHandle;
  registry: AppRegistry;
  /** The embeddings endpoint when configured, else a local encoder (loaded on first use): see `buildEmbeddings`. */
  embeddings: EmbeddingsClient;
  /** How memory retrieval and discovery compare vectors: pgvector in Postgres when installed, else in process. */
  vectors: VectorSearch;
  /** Provider keys (user → tenant → server), written by the API, resolved by the tool activity at call time. */
  secrets: SecretStore;
  /** The process's Prometheus metrics: the API serves them at /metrics, the worker on WORKER_METRICS_PORT. */
  metrics: Metrics;
  /** The process's OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT); undefined when off. */
  tracing: Tracing | undefined;
};

export type ResourceOptions = {
  /** False inside a test: no SIGTERM/SIGINT handlers and no process exit when the clean-up has run. */
  processSignals?: boolean;
  /** Where log lines go (default stderr). */
  logWrite?: (line: string) => void;
  /** The embedded stack: without SECRETS_MASTER_KEY, a master key is generated once under DATA_DIR (and logged so). */
  embeddedSecrets?: boolean;
  /** Where spans go instead of OTLP (a test's in-memory exporter); given, tracing is on. */
  spanExporter?: SpanExporter;
};

/**
 * The logger, the ordered shutdown, the tracing, the database (migrated), the app registry, the embeddings client, the
 * vector search the database allows and the secrets.
 */
export async function openResources(config: Config, opts: ResourceOptions = {}): Promise<Resources> {
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, ...(opts.logWrite ? { write: opts.logWrite } : {}) });
  // Past the workers' own drain (SHUTDOWN_GRACE_SECONDS), so a forced exit only ever cuts a stuck step.
  const forceAfterMs = (config.shutdownGraceSeconds + 20) * 1000;
  const shutdown =
    opts.processSignals === false
      ? createShutdown(logger, { forceAfterMs, signals: false, exit: () => {} })
      : createShutdown(logger, { forceAfterMs });
  const tracing = buildTracing(config.telemetry, opts.spanExporter);
  // Registered first, so it runs last: the spans of everything that stops before it are still exported.
  if (tracing) {
    shutdown.add('tracing', () => tracing.shutdown());
    logger.info('tracing on', { ...config.telemetry.tracing });
  }
  const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
  shutdown.add('database', async () => {
    await database.notifications.close();
    await database.db.destroy();
  });
  await migrateToLatest(database.db);
  const vectors = await chooseVectorSearch(database.db);
  logger.info('vector search', { kind: vectors.kind });
  const registry = await loadAppRegistry(config.appsDir, { logger });
  const { embeddings, kind } = buildEmbeddings(config);
  if (kind === 'word-vectors')
    logger.info('embeddings: local word vectors (the sentence encoder is not installed: scripts/bootstrap.sh fetches it)', {
      sentenceEncoderDir: config.sentenceEncoderDir,
    });
  const secrets = await buildSecretStore({ db: database.db, config, embedded: opts.embeddedSecrets ?? false, logger });
  return { config, logger, shutdown, database, registry, embeddings, vectors, secrets, metrics: createMetrics(), tracing };
}
