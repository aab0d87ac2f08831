import { ConfigError, loadConfig, type Config } from '../config/config.ts';

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
 * Postgres: TEMPORAL_ADDRESS (or a profile giving an address) and DATABASE_URL must be set, else the process exits 1
 * naming what is missing.
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

function exitWith(message: string): never {
  process.stderr.write(`cadenza: ${message}\n`);
  process.exit(1);
}
