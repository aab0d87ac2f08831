import { Client } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { createAdmissionActivities } from '../admission/admission.ts';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';
import { createWorkers } from './create-workers.ts';
import { createAdmissionWakeInterceptor } from './admission-wake.ts';
import { createMissionLogInterceptor } from './mission-log.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';
import { buildWorkflowBundle } from './workflow-bundle.ts';

/** A running pair of workers (missions and model calls) on their own native connection. */
export type RunningWorker = Awaited<ReturnType<typeof startWorker>>;

/** Connects, bundles the workflows (unless given a bundle), and runs both workers until `stop()`. */
export async function startWorker(opts: {
  connection: NativeConnectionOptions;
  config: Pick<Config, 'temporal' | 'model' | 'shutdownGraceSeconds' | 'toolConcurrency' | 'workflowCacheSize' | 'admission'>;
  activityDeps: ActivityDeps;
  logger: Logger;
  /** A prebuilt bundle (tests build one for all workers); bundled here when absent. */
  workflowBundle?: WorkflowBundleOption;
}) {
  installTemporalRuntime(opts.logger);
  const connection = await NativeConnection.connect(opts.connection);
  const workflowBundle = opts.workflowBundle ?? (await buildWorkflowBundle());
  const activities = createActivities(opts.activityDeps);
  // The worker's own client (on its native connection) wakes queued missions when a slot frees.
  const admission = {
    db: opts.activityDeps.db,
    temporal: new Client({ connection, namespace: opts.config.temporal.namespace }),
    config: opts.config,
    logger: opts.logger,
  };
  const workers = await createWorkers({
    connection,
    config: opts.config,
    activities,
    admissionActivities: createAdmissionActivities(admission),
    workflowBundle,
    interceptors: [
      createMissionLogInterceptor({ db: opts.activityDeps.db, logger: opts.logger }),
      createAdmissionWakeInterceptor(admission),
    ],
  }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  const running = workers.run();
  running.catch((err: unknown) => opts.logger.error('worker stopped with an error', { err }));
  return {
    workers,
    running,
    async stop() {
      await workers.shutdown();
      await connection.close();
    },
  };
}
