import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../lib/logger.ts';

let installed = false;

/** Installs the Temporal runtime once per process: our logger, and no signal handlers of its own (we orchestrate shutdown). */
export function installTemporalRuntime(logger: Logger): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new DefaultLogger('WARN' as LogLevel, (entry) => {
      const level = entry.level === 'ERROR' ? 'error' : 'warn';
      logger[level](`temporal: ${entry.message}`, entry.meta ?? {});
    }),
    shutdownSignals: [],
  });
}
