import type { Config } from '../config/config.ts';
import { createDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createShutdown, type Shutdown } from '../lib/shutdown.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from '../memory/embeddings-client.ts';
import { loadAppRegistry, type AppRegistry } from '../tools/app-registry.ts';

/** What the API and the worker of one process share, each opened once: the composition root's first floor. */
export type Resources = {
  config: Config;
  logger: Logger;
  /** Every resource below registers its clean-up here as it opens; the builders add theirs on top. */
  shutdown: Shutdown;
  database: DatabaseHandle;
  registry: AppRegistry;
  embeddings: EmbeddingsClient | undefined;
};

export type ResourceOptions = {
  /** False inside a test: no SIGTERM/SIGINT handlers and no process exit when the clean-up has run. */
  processSignals?: boolean;
  /** Where log lines go (default stderr). */
  logWrite?: (line: string) => void;
};

/** The logger, the ordered shutdown, the database (migrated), the app registry and the embeddings client. */
export async function openResources(config: Config, opts: ResourceOptions = {}): Promise<Resources> {
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, ...(opts.logWrite ? { write: opts.logWrite } : {}) });
  // Past the workers' own drain (SHUTDOWN_GRACE_SECONDS), so a forced exit only ever cuts a stuck step.
  const forceAfterMs = (config.shutdownGraceSeconds + 20) * 1000;
  const shutdown =
    opts.processSignals === false
      ? createShutdown(logger, { forceAfterMs, signals: false, exit: () => {} })
      : createShutdown(logger, { forceAfterMs });
  const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
  shutdown.add('database', () => database.db.destroy());
  await migrateToLatest(database.db);
  const registry = await loadAppRegistry(config.appsDir, { logger });
  const embeddings = config.embeddings ? createEmbeddingsClient(config.embeddings) : undefined;
  return { config, logger, shutdown, database, registry, embeddings };
}
