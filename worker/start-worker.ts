import { Client } from '@temporalio/client';
import type { NativeConnection, WorkflowBundleOption } from '@temporalio/worker';
import { createAdmissionActivities } from '../admission/admission.ts';
import { createProviderTurnActivities } from '../admission/provider-turn.ts';
import { createScheduleActivities } from '../schedules/schedule-activities.ts';
import { createDelegationActivities } from '../missions/delegation-activities.ts';
import { createEvalActivities } from '../evals/eval-activities.ts';
import { createWebhookActivities } from '../webhooks/delivery-activities.ts';
import { startWebhookSweep } from '../webhooks/wake.ts';
import { createWebhookWakeInterceptor } from './webhook-wake.ts';
import { startSettler } from '../admission/start-settler.ts';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';
import { createWorkers } from './create-workers.ts';
import { createAdmissionWakeInterceptor } from './admission-wake.ts';
import { createMissionEndLogInterceptor } from './mission-end-log.ts';
import { createActivityMetricsInterceptor } from './activity-metrics.ts';
import { createActivityTracingInterceptors } from './activity-tracing.ts';
import { createAttemptLogInterceptor } from './attempt-log.ts';
import { watchLoopStalls } from './loop-stalls.ts';
import { workflowSpanSink } from './workflow-span-sink.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import type { Notifications } from '../notify/notifications.ts';
import { createProgressSinks } from '../events/progress-sinks.ts';
import { buildWorkflowBundleApart } from './workflow-bundle.ts';
import { promoteVersion, workerVersion } from './worker-version.ts';

/** A running set of workers (missions, model calls, tool calls) on the process's native connection. */
export type RunningWorker = Awaited<ReturnType<typeof startWorker>>;

/** Bundles the workflows in a child process (unless given a bundle) and runs the workers until `stop()`. */
export async function startWorker(opts: {
  /** The native connection, opened (and closed on shutdown) by the root: `wiring/worker-connections.ts`. */
  connection: NativeConnection;
  /** The worker's /metrics port as the root served it (undefined: none). */
  metricsPort: number | undefined;
  config: Pick<
    Config,
    | 'temporal'
    | 'model'
    | 'shutdownGraceSeconds'
    | 'toolConcurrency'
    | 'workflowCacheSize'
    | 'workerQueues'
    | 'admission'
    | 'telemetry'
    | 'maxTurnsCap'
    | 'budgets'
    | 'skills'
    | 'sessions'
    | 'webhooks'
    | 'maxDelegationDepth'
    | 'evals'
  >;
  metrics: Metrics;
  activityDeps: ActivityDeps;
  /** Where the workflow's progress wake-ups go (the API's relays listen). */
  notifications: Notifications;
  logger: Logger;
  /** The process's tracing; undefined when off (no interceptors, no spans). */
  tracing: Tracing | undefined;
  /** A prebuilt bundle (tests build one for all workers), built with the same tracing choice; bundled here when absent. */
  workflowBundle?: WorkflowBundleOption;
  /** False: the worker never pushes events, it only wakes the relay (for the bench that compares the two). */
  pushEvents?: boolean;
}) {
  const { tracing, connection } = opts;
  // Only a process serving the missions queue runs workflows; a versioned one also derives its build id from them.
  const needsBundle = opts.config.workerQueues.includes('missions') || opts.config.temporal.deployment !== undefined;
  const workflowBundle = !needsBundle
    ? undefined
    : (opts.workflowBundle ?? (await buildWorkflowBundleApart({ tracing: tracing !== undefined })));
  const version = workflowBundle ? await workerVersion(opts.config.temporal.deployment, workflowBundle) : undefined;
  const activities = createActivities(opts.activityDeps);
  // The worker's own client (on its native connection) wakes queued missions when a slot frees.
  const admission = {
    db: opts.activityDeps.db,
    temporal: new Client({ connection, namespace: opts.config.temporal.namespace }),
    config: opts.config,
    logger: opts.logger,
  };
  // First in each list: the other interceptors run inside the activity's span.
  const traced = tracing ? createActivityTracingInterceptors(tracing, opts.config.model) : [];
  const progress = createProgressSinks(opts.notifications, { push: opts.pushEvents ?? true });
  // What tells, after a heartbeat timeout, whether this worker ran the attempt and what held it (docs/decisions.md).
  const attemptLog = createAttemptLogInterceptor(opts.logger);
  const stopStallWatch = watchLoopStalls(opts.logger);
  const workers = await createWorkers({
    connection,
    config: opts.config,
    activities,
    admissionActivities: {
      ...createAdmissionActivities(admission),
      // PROVIDER_LIMITS: each model call's turn, from the bucket every worker shares.
      ...createProviderTurnActivities({
        db: opts.activityDeps.db,
        limits: opts.config.model.providerLimits,
        modelTargets: opts.activityDeps.modelTargets,
        maxTokens: opts.config.model.maxTokens,
      }),
    },
    // A schedule's runs start missions through the API's own start path, as the schedule's owner.
    scheduleActivities: createScheduleActivities({
      ...admission,
      embeddings: opts.activityDeps.embeddings,
      vectors: opts.activityDeps.vectors,
    }),
    webhookActivities: createWebhookActivities(admission),
    delegationActivities: createDelegationActivities(admission),
    // An eval run's missions start through the same path, as the run's owner; its grader uses the tiers' models.
    evalActivities: createEvalActivities({
      ...admission,
      embeddings: opts.activityDeps.embeddings,
      vectors: opts.activityDeps.vectors,
      modelTargets: opts.activityDeps.modelTargets,
      evals: opts.config.evals,
    }),
    ...(workflowBundle ? { workflowBundle } : {}),
    ...(version ? { version } : {}),
    sinks: {
      ...progress.sinks,
      // The workflow's spans (RunWorkflow, StartActivity) leave the sandbox through this sink, into our processor.
      ...(tracing ? workflowSpanSink(tracing) : {}),
    },
    interceptors: [
      ...traced,
      createMissionEndLogInterceptor({ db: opts.activityDeps.db, logger: opts.logger, metrics: opts.metrics }),
      createAdmissionWakeInterceptor(admission),
      createWebhookWakeInterceptor(admission),
      createActivityMetricsInterceptor(opts.metrics),
      attemptLog,
      progress.interceptor,
    ],
    callInterceptors: [...traced, createActivityMetricsInterceptor(opts.metrics), attemptLog, progress.interceptor],
  });
  const running = workers.run();
  running.catch((err: unknown) => opts.logger.error('worker stopped with an error', { err }));
  // Promoted once its pollers have reached the server (they register the version); a failure leaves it to the operator.
  const promoting = new AbortController();
  const promoted =
    version && opts.config.temporal.deployment
      ? promoteVersion({
          connection,
          namespace: opts.config.temporal.namespace,
          version,
          promote: opts.config.temporal.deployment.promote,
          logger: opts.logger,
          signal: promoting.signal,
        }).catch((err: unknown) => {
          opts.logger.error('worker version not promoted: promote it with `temporal worker deployment set-current-version`', {
            ...version,
            err,
          });
          return 'left' as const;
        })
      : Promise.resolve('left' as const);
  // Missions a failed start left `starting` (holding a slot) are settled here, whoever reads them or not.
  const settler = startSettler(admission);
  // Endpoints whose wake-up was lost (a worker killed between a commit and its signal) are woken here.
  const sweep = startWebhookSweep(admission);
  let stopped: Promise<void> | undefined;
  return {
    workers,
    running,
    /** The build's Worker Deployment version; undefined when versioning is off. */
    version,
    /** Settles once the version was promoted (or left to the operator). */
    promoted,
    /** The port of the worker's /metrics; undefined when off or when the port was taken. */
    metricsPort: opts.metricsPort,
    /** Drains; a second call (a test stopping it before the process shutdown does) waits for the first. */
    stop() {
      stopped ??= (async () => {
        stopStallWatch();
        promoting.abort();
        await settler.stop();
        await sweep.stop();
        await workers.shutdown();
      })();
      return stopped;
    },
  };
}
