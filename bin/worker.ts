import { createModelClient } from '../model/create-model-client.ts';
import { buildSecretStore } from '../secrets/build-secret-store.ts';
import { loadAppRegistry } from '../tools/app-registry.ts';
import { startWorker } from '../worker/start-worker.ts';
import { loadProductionConfigOrExit, openDatabase, startProcess } from './startup.ts';

// Production worker process: runs the mission workflows and their activities (model calls on their own queue,
// MODEL_CONCURRENCY slots per process). Capacity grows by running more of these.
const { config, temporalAddress } = loadProductionConfigOrExit(process.env);
const { logger, shutdown } = startProcess(config);
const database = await openDatabase(config, shutdown);
const registry = await loadAppRegistry(config.appsDir, { logger });
const modelClient = createModelClient({ provider: config.model.provider, baseUrl: config.model.baseUrl, apiKey: config.model.apiKey });

const secrets = await buildSecretStore({ db: database.db, config, embedded: false, logger });
const worker = await startWorker({ config, temporalAddress, db: database.db, registry, modelClient, logger, secrets });
// stop() lets running activities finish for up to SHUTDOWN_GRACE_SECONDS (the workers' shutdownGraceTime).
shutdown.add('worker', () => worker.stop());
// A worker that stops on its own (fatal error) must end the process, so that the orchestrator restarts it.
worker.running.then(
  () => void shutdown.shutdown('worker stopped'),
  () => void shutdown.shutdown('worker failed'),
);
logger.info('worker running', {
  temporal: temporalAddress,
  namespace: config.temporal.namespace,
  taskQueues: [config.temporal.taskQueue, config.temporal.modelTaskQueue],
  modelConcurrency: config.model.concurrency,
  apps: registry.apps.length,
  tools: registry.listTools().length,
  database: database.where,
});
