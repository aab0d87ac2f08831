import { ConfigError, loadConfig, type Config } from '../config/config.ts';
import { createDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { createShutdown } from '../lib/shutdown.ts';

/** The ordered clean-up of a process (see lib/shutdown.ts). */
export type Shutdown = ReturnType<typeof createShutdown>;

/** The parsed configuration; an invalid variable ends the process with exit code 1 and a message naming it. */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) exitWith(err.message);
    throw err;
  }
}

/**
 * The configuration of a production process (bin/api.ts, bin/worker.ts), which embeds neither Temporal nor
 * Postgres: TEMPORAL_ADDRESS and DATABASE_URL must be set, else the process exits 1 naming what is missing.
 */
export function loadProductionConfigOrExit(env: Record<string, string | undefined>): { config: Config; temporalAddress: string } {
  const config = loadConfigOrExit(env);
  const temporalAddress = config.temporal.address;
  const missing = [
    temporalAddress ? '' : '  TEMPORAL_ADDRESS: not set; give the Temporal frontend as host:port (e.g. temporal:7233)',
    config.databaseUrl ? '' : '  DATABASE_URL: not set; give a Postgres URL (postgres://user:password@host:5432/db)',
  ].filter(Boolean);
  if (missing.length > 0 || !temporalAddress) {
    exitWith(`invalid configuration: a production process needs these variables:\n${missing.join('\n')}`);
  }
  return { config, temporalAddress };
}

/** The logger and the ordered shutdown every composition root starts with. */
export function startProcess(config: Config): { logger: Logger; shutdown: Shutdown } {
  const logger = createLogger({ level: config.logLevel });
  // Past the workers' own drain (SHUTDOWN_GRACE_SECONDS), so a forced exit only ever cuts a stuck step.
  const shutdown = createShutdown(logger, { forceAfterMs: (config.shutdownGraceSeconds + 20) * 1000 });
  return { logger, shutdown };
}

/** Opens Postgres (DATABASE_URL) or PGlite (DATA_DIR), destroys it on shutdown, and migrates it to the latest schema. */
export async function openDatabase(config: Config, shutdown: Shutdown): Promise<DatabaseHandle> {
  const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  shutdown.add('database', () => database.db.destroy());
  await migrateToLatest(database.db);
  return database;
}

function exitWith(message: string): never {
  process.stderr.write(`cadenza: ${message}\n`);
  process.exit(1);
}
