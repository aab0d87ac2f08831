import { getHeapStatistics } from 'node:v8';
import { buildWorker } from '../wiring/build-worker.ts';
import { loadProductionConfigOrExit } from '../wiring/process-config.ts';
import { openResources } from '../wiring/resources.ts';

// Production worker process: runs the mission workflows and their activities (model calls and tool calls on queues
// of their own, MODEL_CONCURRENCY and TOOL_CONCURRENCY slots per process). Capacity grows by running more of these.
const { config, temporalAddress } = loadProductionConfigOrExit(process.env);
const resources = await openResources(config);
const { logger, shutdown, registry } = resources;
const worker = await buildWorker(resources, { temporalAddress, env: process.env });
// A worker that stops on its own (fatal error) must end the process, so that the orchestrator restarts it.
worker.running.then(
  () => void shutdown.shutdown('worker stopped'),
  () => void shutdown.shutdown('worker failed'),
);
logger.info('worker running', {
  temporal: temporalAddress,
  namespace: config.temporal.namespace,
  queues: config.workerQueues,
  taskQueue: config.temporal.taskQueue,
  modelConcurrency: config.model.concurrency,
  toolConcurrency: config.toolConcurrency,
  workflowCacheSize: config.workflowCacheSize,
  // Worker versioning: the Worker Deployment version of this build (undefined: unversioned).
  version: worker.version,
  // What the launch gave V8 (wiring/worker-process.ts: 1 GB plus the young generation; Node's default is ~4 GB).
  heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
  apps: registry.apps.length,
  tools: registry.listTools().length,
  database: resources.database.where,
});
