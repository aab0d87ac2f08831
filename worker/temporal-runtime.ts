import { DefaultLogger, Runtime, makeTelemetryFilterString, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../lib/logger.ts';

let installed = false;
const EXPECTED = [/^No workflows registered/];

/**
 * Installs the Temporal runtime once per process: our logger, also for the native core's own lines (forwarded, so
 * they are JSON like the rest instead of coloured text on stderr), and no signal handlers of its own (we orchestrate
 * shutdown).
 */
export function installTemporalRuntime(logger: Logger): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new DefaultLogger('WARN' as LogLevel, (entry) => {
      // The model-call worker serves activities only, by design: its "No workflows registered" warning is expected.
      const expected = EXPECTED.some((re) => re.test(entry.message));
      const level = expected ? 'debug' : entry.level === 'ERROR' ? 'error' : 'warn';
      logger[level](`temporal: ${entry.message}`, entry.meta ?? {});
    }),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} } },
    shutdownSignals: [],
  });
}
