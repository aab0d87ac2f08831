import {
  Worker,
  type ActivityInterceptorsFactory,
  type InjectedSinks,
  type NativeConnection,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import type { MissionActivities } from '../contracts/activities.ts';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { AdmissionActivities } from '../contracts/activities.ts';
import type { ScheduleActivities } from '../contracts/schedules.ts';
import type { WebhookActivities } from '../contracts/webhooks.ts';
import type { DelegationActivities } from '../contracts/delegation.ts';
import type { EvalActivities } from '../contracts/evals.ts';
import type { MissionSinks } from '../contracts/events.ts';
import type { WorkerVersion } from './worker-version.ts';

/** The three Temporal workers of a worker process, run and stopped together. */
export type MissionWorkers = {
  run(): Promise<void>;
  shutdown(): Promise<void>;
  /** Those of WORKER_QUEUES only: a process may serve one queue. */
  readonly missions?: Worker;
  readonly model?: Worker;
  readonly tools?: Worker;
};

/**
 * The missions worker (workflows, store activities), the model worker (model calls, the script factory's too, on their own queue with
 * MODEL_CONCURRENCY slots, so missions beyond the cap wait durably in the queue) and the tool worker (tool calls on
 * their own queue with TOOL_CONCURRENCY slots: a call waiting on I/O never holds one of the scarce default slots).
 */
export async function createWorkers(opts: {
  connection: NativeConnection;
  config: Pick<Config, 'temporal' | 'model' | 'shutdownGraceSeconds' | 'toolConcurrency' | 'workflowCacheSize' | 'workerQueues'>;
  activities: MissionActivities;
  /** The queued missions' own check for a slot (admission/). */
  admissionActivities?: AdmissionActivities;
  /** The steps of a schedule's run workflow (schedules/). */
  scheduleActivities?: ScheduleActivities;
  /** The steps of an endpoint's webhook delivery workflow (webhooks/). */
  webhookActivities?: WebhookActivities;
  /** The steps of a `delegate` call around its child mission (missions/). */
  delegationActivities?: DelegationActivities;
  /** The steps of an eval run's workflow (evals/). */
  evalActivities?: EvalActivities;
  /** The workflows' bundle (needed when the process serves the missions queue). */
  workflowBundle?: WorkflowBundleOption;
  /** The build's Worker Deployment version (worker/worker-version.ts); undefined: unversioned workers. */
  version?: WorkerVersion;
  /** The workflow's sinks (its progress wake-ups; with tracing, the span exporter). */
  sinks: InjectedSinks<MissionSinks> & Partial<InjectedSinks<OpenTelemetrySinks>>;
  /** Activity interceptors of the missions worker (tracing, the mission end log, admission wake-ups, metrics). */
  interceptors?: ActivityInterceptorsFactory[];
  /** Activity interceptors of the model and tool workers (tracing, metrics). */
  callInterceptors?: ActivityInterceptorsFactory[];
}): Promise<MissionWorkers> {
  const { connection, config, activities } = opts;
  const { callModel, compactContext, writeScript, runTool, ...others } = activities;
  const common = {
    connection,
    namespace: config.temporal.namespace,
    shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
    // A tool told of its cancel by the API heartbeats once at once to fetch Temporal's cancellation: that beat must not
    // wait out a throttle. The steady rate stays the activities' own timers (one a second per tool).
    maxHeartbeatThrottleInterval: '50ms',
    // Versioned, all three workers are one version: a pinned mission's model and tool calls run on its own build too.
    // Every workflow is pinned to the build that started it (a session moves at its continue-as-new: session-chain.ts).
    ...(opts.version
      ? {
          workerDeploymentOptions: {
            version: opts.version,
            useWorkerVersioning: true as const,
            defaultVersioningBehavior: 'PINNED' as const,
          },
        }
      : {}),
  } as const;
  const serves = (q: (typeof config.workerQueues)[number]) => config.workerQueues.includes(q);
  const missions = !serves('missions')
    ? undefined
    : await Worker.create({
        ...common,
        taskQueue: config.temporal.taskQueue,
        ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : {}),
        sinks: opts.sinks,
        activities: {
          ...others,
          ...opts.admissionActivities,
          ...opts.scheduleActivities,
          ...opts.webhookActivities,
          ...opts.delegationActivities,
          ...opts.evalActivities,
        },
        // A mission waiting on a tool sits in this cache (tens of KB of the workflow thread's heap each); evicted, it replays.
        // Not the SDK's default, which follows the heap limit (2,395 under Node's 4 GB default, ~500 under the worker's 1 GB).
        maxCachedWorkflows: config.workflowCacheSize,
        ...(opts.interceptors ? { interceptors: { activity: opts.interceptors } } : {}),
      });
  const model = !serves('model')
    ? undefined
    : await Worker.create({
        ...common,
        taskQueue: config.temporal.modelTaskQueue,
        activities: { callModel, compactContext, writeScript },
        maxConcurrentActivityTaskExecutions: config.model.concurrency,
        ...(opts.callInterceptors ? { interceptors: { activity: opts.callInterceptors } } : {}),
      });
  const tools = !serves('tools')
    ? undefined
    : await Worker.create({
        ...common,
        taskQueue: config.temporal.toolTaskQueue,
        activities: { runTool },
        maxConcurrentActivityTaskExecutions: config.toolConcurrency,
        ...(opts.callInterceptors ? { interceptors: { activity: opts.callInterceptors } } : {}),
      });
  const all = [missions, model, tools].filter((w) => w !== undefined);
  let running: Promise<void> | undefined;
  return {
    missions,
    model,
    tools,
    run: () => (running ??= Promise.all(all.map((w) => w.run())).then(() => undefined)),
    async shutdown() {
      for (const w of all) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
    },
  };
}
