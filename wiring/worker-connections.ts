import { NativeConnection } from '@temporalio/worker';
import { createServer } from 'node:net';
import { serveWorkerMetrics } from '../telemetry/metrics-server.ts';
import { temporalConnectionOptions } from '../temporal/connection.ts';
import { installTemporalRuntime } from '../worker/temporal-runtime.ts';
import type { Resources } from './resources.ts';

/** What a worker process reaches out with, opened once here and handed to `startWorker`. */
export type WorkerConnections = {
  connection: NativeConnection;
  /** The port of the worker's /metrics; undefined when off or when the port was taken. */
  metricsPort: number | undefined;
};

/**
 * Installs the Temporal runtime (with the SDK's own metrics), serves the worker's /metrics and opens the native
 * connection; each is closed on shutdown, after the workers (registered later, so stopped first) have drained.
 */
export async function openWorkerConnections(res: Resources, temporalAddress: string): Promise<WorkerConnections> {
  const port = res.config.telemetry.workerMetricsPort;
  // The runtime goes in before any native connection exists: the SDK takes its options only then.
  const sdkMetricsUrl = installTemporalRuntime(res.logger, port === 'off' ? undefined : await freeLoopbackPort());
  const metricsServer = port === 'off' ? undefined : await startMetricsServer(res, port, sdkMetricsUrl);
  if (metricsServer) res.shutdown.add('worker metrics', () => metricsServer.close());
  const connection = await NativeConnection.connect(temporalConnectionOptions(res.config.temporal, temporalAddress));
  res.shutdown.add('temporal worker connection', () => connection.close());
  return { connection, metricsPort: metricsServer?.port };
}

/** The worker's /metrics; a port already in use (another worker on the machine) costs the metrics, not the worker. */
async function startMetricsServer(res: Resources, port: number, sdkMetricsUrl: string | undefined) {
  try {
    const server = await serveWorkerMetrics({ registry: res.metrics.registry, port, sdkMetricsUrl });
    res.logger.info('worker metrics at /metrics', { port: server.port });
    return server;
  } catch (err) {
    res.logger.warn('worker metrics not served: WORKER_METRICS_PORT is taken', { port, err });
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
