import {
  Worker,
  type ActivityInterceptorsFactory,
  type InjectedSinks,
  type NativeConnection,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import type { MissionActivities } from '../activities/index.ts';
import type { MissionSinks } from '../workflows/definitions.ts';

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
  /** The workflow's sinks (its progress wake-ups). */
  sinks: InjectedSinks<MissionSinks>;
  /** Activity interceptors of the missions worker (the mission log). */
  interceptors?: ActivityInterceptorsFactory[];
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
    // A tool told of its cancel by the API heartbeats once at once to fetch Temporal's cancellation: that beat must not
    // wait out a throttle. The steady rate stays the activities' own timers (one a second per tool).
    maxHeartbeatThrottleInterval: '50ms',
    workflowBundle: opts.workflowBundle,
    sinks: opts.sinks,
    activities: others,
    ...(opts.interceptors ? { interceptors: { activity: opts.interceptors } } : {}),
  });
  const model = await Worker.create({
    ...common,
    taskQueue: config.temporal.modelTaskQueue,
    activities: { callModel },
    maxConcurrentActivityTaskExecutions: config.model.concurrency,
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
