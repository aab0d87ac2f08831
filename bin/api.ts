import { buildSecretStore } from '../secrets/build-secret-store.ts';
import { loadAppRegistry } from '../tools/app-registry.ts';
import { serveApi } from './serve-api.ts';
import { loadProductionConfigOrExit, openDatabase, startProcess } from './startup.ts';

// Production API process: scales out on its own, against a Temporal cluster and a Postgres server. No worker
// here (bin/worker.ts runs the workflows and activities); SIGTERM drains HTTP, then closes Temporal and Postgres.
const { config, temporalAddress } = loadProductionConfigOrExit(process.env);
const { logger, shutdown } = startProcess(config);
const database = await openDatabase(config, shutdown);
// The API reads the apps too: authoring checks that a skill's allowed-tools name installed tools.
const registry = await loadAppRegistry(config.appsDir, { logger });
const secrets = await buildSecretStore({ db: database.db, config, embedded: false, logger });
const http = await serveApi({ config, temporalAddress, db: database.db, logger, shutdown, registry, secrets, env: process.env });
logger.info('api listening', {
  url: `${http.url}/api/v1`,
  temporal: temporalAddress,
  namespace: config.temporal.namespace,
  database: database.where,
});
