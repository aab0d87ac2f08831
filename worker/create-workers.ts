import { Worker, type ActivityInterceptorsFactory, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import type { MissionActivities } from '../activities/index.ts';

/** The two Temporal workers of a worker process, run and stopped together. */
export type MissionWorkers = { run(): Promise<void>; shutdown(): Promise<void>; readonly missions: Worker; readonly model: Worker };

/**
 * The missions worker (workflows, tools, store activities) and the model worker (model calls only, on their own
 * queue with MODEL_CONCURRENCY slots, so missions beyond the cap wait durably in the queue).
 */
export async function createWorkers(opts: {
  connection: NativeConnection;
  config: Pick<Config, 'temporal' | 'model' | 'shutdownGraceSeconds'>;
  activities: MissionActivities;
  workflowBundle: WorkflowBundleOption;
  /** Activity interceptors of the missions worker (the mission log, metrics). */
  interceptors?: ActivityInterceptorsFactory[];
  /** Activity interceptors of the model worker (metrics). */
  modelInterceptors?: ActivityInterceptorsFactory[];
}): Promise<MissionWorkers> {
  const { connection, config, activities } = opts;
  const { callModel, ...others } = activities;
  const common = {
    connection,
    namespace: config.temporal.namespace,
    shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
    // Heartbeats are how a cancel reaches a running tool: send them at least every second.
    maxHeartbeatThrottleInterval: '1s',
  } as const;
  const missions = await Worker.create({
    ...common,
    taskQueue: config.temporal.taskQueue,
    workflowBundle: opts.workflowBundle,
    activities: others,
    ...(opts.interceptors ? { interceptors: { activity: opts.interceptors } } : {}),
  });
  const model = await Worker.create({
    ...common,
    taskQueue: config.temporal.modelTaskQueue,
    activities: { callModel },
    maxConcurrentActivityTaskExecutions: config.model.concurrency,
    ...(opts.modelInterceptors ? { interceptors: { activity: opts.modelInterceptors } } : {}),
  });
  let running: Promise<void> | undefined;
  return {
    missions,
    model,
    run: () => (running ??= Promise.all([missions.run(), model.run()]).then(() => undefined)),
    async shutdown() {
      for (const w of [missions, model]) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
    },
  };
}
