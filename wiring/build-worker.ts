import type { WorkflowBundleOption } from '@temporalio/worker';
import { createModelClient } from '../model/create-model-client.ts';
import { createLivePublisher } from '../notify/live-publisher.ts';
import { createToolCancels } from '../notify/tool-cancels.ts';
import type { ModelClient } from '../model/model-types.ts';
import { temporalConnectionOptions } from '../temporal/connection.ts';
import { createHealthMonitor } from '../tools/health.ts';
import { createSystemTools } from '../tools/system/index.ts';
import { startWorker, type RunningWorker } from '../worker/start-worker.ts';
import type { Resources } from './resources.ts';

/**
 * Starts the process's workers (missions and model calls) on the shared resources; stopped on shutdown, letting
 * running activities finish for up to SHUTDOWN_GRACE_SECONDS.
 */
export async function buildWorker(
  res: Resources,
  opts: {
    temporalAddress: string;
    /** The environment HTTP tool headers may reference (`${NAME}`). */
    env: Record<string, string | undefined>;
    /** Another model endpoint than the configured one (the demo's fake model server). */
    modelClient?: ModelClient;
    workflowBundle?: WorkflowBundleOption;
  },
): Promise<RunningWorker> {
  const { config, logger } = res;
  const worker = await startWorker({
    connection: temporalConnectionOptions(config.temporal, opts.temporalAddress),
    config,
    logger,
    activityDeps: {
      db: res.database.db,
      modelClient: opts.modelClient ?? createModelClient(config.model),
      registry: res.registry,
      systemTools: createSystemTools(config.scripts),
      model: config.model,
      embeddings: res.embeddings,
      logger,
      env: opts.env,
      databaseOutageWaitSeconds: config.databaseOutageWaitSeconds,
      secrets: res.secrets,
      health: createHealthMonitor({ env: opts.env }),
      maxToolsPerMission: config.maxToolsPerMission,
      live: createLivePublisher(res.database.notifications),
      toolCancels: createToolCancels(res.database.notifications, { listen: true }),
    },
    notifications: res.database.notifications,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : {}),
  });
  res.shutdown.add('worker', () => worker.stop());
  return worker;
}
