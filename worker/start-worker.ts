import { Client } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { createAdmissionActivities } from '../admission/admission.ts';
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
import { workflowSpanSink } from './workflow-span-sink.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import { serveWorkerMetrics } from '../telemetry/metrics-server.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { createServer } from 'node:net';
import type { Notifications } from '../notify/notifications.ts';
import { createProgressSinks } from './progress-sinks.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';
import { buildWorkflowBundleApart } from './workflow-bundle.ts';

/** A running pair of workers (missions and model calls) on their own native connection. */
export type RunningWorker = Awaited<ReturnType<typeof startWorker>>;

/** Connects, bundles the workflows in a child process (unless given a bundle), and runs both workers until `stop()`. */
export async function startWorker(opts: {
  connection: NativeConnectionOptions;
  config: Pick<Config, 'temporal' | 'model' | 'shutdownGraceSeconds' | 'toolConcurrency' | 'workflowCacheSize' | 'admission' | 'telemetry'>;
  metrics: Metrics;
  activityDeps: ActivityDeps;
  /** Where the workflow's progress wake-ups go (the API's relays listen). */
  notifications: Notifications;
  logger: Logger;
  /** The process's tracing; undefined when off (no interceptors, no spans). */
  tracing: Tracing | undefined;
  /** A prebuilt bundle (tests build one for all workers), built with the same tracing choice; bundled here when absent. */
  workflowBundle?: WorkflowBundleOption;
}) {
  const { tracing } = opts;
  const metricsPort = opts.config.telemetry.workerMetricsPort;
  const sdkMetricsUrl = installTemporalRuntime(opts.logger, metricsPort === 'off' ? undefined : await freeLoopbackPort());
  const metricsServer = metricsPort === 'off' ? undefined : await startMetricsServer(opts, metricsPort, sdkMetricsUrl);
  const connection = await NativeConnection.connect(opts.connection);
  const workflowBundle = opts.workflowBundle ?? (await buildWorkflowBundleApart({ tracing: tracing !== undefined }));
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
  const progress = createProgressSinks(opts.notifications);
  const workers = await createWorkers({
    connection,
    config: opts.config,
    activities,
    admissionActivities: createAdmissionActivities(admission),
    workflowBundle,
    sinks: {
      ...progress.sinks,
      // The workflow's spans (RunWorkflow, StartActivity) leave the sandbox through this sink, into our processor.
      ...(tracing ? workflowSpanSink(tracing) : {}),
    },
    interceptors: [
      ...traced,
      createMissionEndLogInterceptor({ db: opts.activityDeps.db, logger: opts.logger, metrics: opts.metrics }),
      createAdmissionWakeInterceptor(admission),
      createActivityMetricsInterceptor(opts.metrics),
      progress.interceptor,
    ],
    callInterceptors: [...traced, createActivityMetricsInterceptor(opts.metrics), progress.interceptor],
  }).catch(async (err: unknown) => {
    await connection.close();
    await metricsServer?.close();
    throw err;
  });
  const running = workers.run();
  running.catch((err: unknown) => opts.logger.error('worker stopped with an error', { err }));
  // Missions a failed start left `starting` (holding a slot) are settled here, whoever reads them or not.
  const settler = startSettler(admission);
  let stopped: Promise<void> | undefined;
  return {
    workers,
    running,
    /** The port of the worker's /metrics; undefined when off or when the port was taken. */
    metricsPort: metricsServer?.port,
    /** Drains and closes; a second call (a test stopping it before the process shutdown does) waits for the first. */
    stop() {
      stopped ??= (async () => {
        await settler.stop();
        await workers.shutdown();
        await connection.close();
        await metricsServer?.close();
      })();
      return stopped;
    },
  };
}

/** The worker's /metrics; a port already in use (another worker on the machine) costs the metrics, not the worker. */
async function startMetricsServer(opts: { metrics: Metrics; logger: Logger }, port: number, sdkMetricsUrl: string | undefined) {
  try {
    const server = await serveWorkerMetrics({ registry: opts.metrics.registry, port, sdkMetricsUrl });
    opts.logger.info('worker metrics at /metrics', { port: server.port });
    return server;
  } catch (err) {
    opts.logger.warn('worker metrics not served: WORKER_METRICS_PORT is taken', { port, err });
    return undefined;
  }
}

/** A loopback port free right now, for the Temporal SDK's own Prometheus exporter. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => ok(port));
    });
  });
}
