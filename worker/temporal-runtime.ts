import { DefaultLogger, Runtime, makeTelemetryFilterString, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../lib/logger.ts';

let installed = false;
let sdkMetricsUrl: string | undefined;
const EXPECTED = [/^No workflows registered/];

/**
 * Installs the Temporal runtime once per process: our logger, also for the native core's own lines (forwarded, so
 * they are JSON like the rest instead of coloured text on stderr), and no signal handlers of its own (we orchestrate
 * shutdown), and the SDK's own worker metrics in Prometheus form on `sdkMetricsPort` (loopback). Returns where those
 * metrics are served (the first install's, once per process).
 */
export function installTemporalRuntime(logger: Logger, sdkMetricsPort?: number): string | undefined {
  if (installed) return sdkMetricsUrl;
  installed = true;
  if (sdkMetricsPort !== undefined) sdkMetricsUrl = `http://127.0.0.1:${sdkMetricsPort}/metrics`;
  Runtime.install({
    logger: new DefaultLogger('WARN' as LogLevel, (entry) => {
      // The model-call worker serves activities only, by design: its "No workflows registered" warning is expected.
      const expected = EXPECTED.some((re) => re.test(entry.message));
      const level = expected ? 'debug' : entry.level === 'ERROR' ? 'error' : 'warn';
      logger[level](`temporal: ${entry.message}`, entry.meta ?? {});
    }),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} },
      ...(sdkMetricsPort !== undefined ? { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkMetricsPort}` } } } : {}),
    },
    shutdownSignals: [],
  });
  return sdkMetricsUrl;
}
