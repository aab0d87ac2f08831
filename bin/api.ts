import { buildApi } from '../wiring/build-api.ts';
import { loadProductionConfigOrExit } from '../wiring/process-config.ts';
import { openResources } from '../wiring/resources.ts';

// Production API process: scales out on its own, against a Temporal cluster and a Postgres server. No worker
// here (bin/worker.ts runs the workflows and activities); SIGTERM drains HTTP, then closes Temporal and Postgres.
const { config, temporalAddress } = loadProductionConfigOrExit(process.env);
const resources = await openResources(config);
const api = await buildApi(resources, { temporalAddress, env: process.env });
resources.logger.info('api listening', {
  url: `${api.url}/api/v1`,
  temporal: temporalAddress,
  namespace: config.temporal.namespace,
  database: resources.database.where,
});
