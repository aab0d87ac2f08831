import { NativeConnection, type NativeConnectionOptions, type WorkflowBundleOption } from '@temporalio/worker';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';
import { createWorkers } from './create-workers.ts';
import type { Notifications } from '../notify/notifications.ts';
import { createMissionLogInterceptor } from './mission-log.ts';
import { createProgressSinks } from './progress-sinks.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';
import { buildWorkflowBundle } from './workflow-bundle.ts';

/** A running pair of workers (missions and model calls) on their own native connection. */
export type RunningWorker = Awaited<ReturnType<typeof startWorker>>;

/** Connects, bundles the workflows (unless given a bundle), and runs both workers until `stop()`. */
export async function startWorker(opts: {
  connection: NativeConnectionOptions;
  config: Pick<Config, 'temporal' | 'model' | 'shutdownGraceSeconds'>;
  activityDeps: ActivityDeps;
  /** Where the workflow's progress wake-ups go (the API's relays listen). */
  notifications: Notifications;
  logger: Logger;
  /** A prebuilt bundle (tests build one for all workers); bundled here when absent. */
  workflowBundle?: WorkflowBundleOption;
}) {
  installTemporalRuntime(opts.logger);
  const connection = await NativeConnection.connect(opts.connection);
  const workflowBundle = opts.workflowBundle ?? (await buildWorkflowBundle());
  const activities = createActivities(opts.activityDeps);
  const workers = await createWorkers({
    connection,
    config: opts.config,
    activities,
    workflowBundle,
    sinks: createProgressSinks(opts.notifications),
    interceptors: [createMissionLogInterceptor({ db: opts.activityDeps.db, logger: opts.logger })],
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
