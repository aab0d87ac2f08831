import { CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { lastBeatAt } from '../activities/checkpoint.ts';
import type { Logger } from '../lib/logger.ts';

/** An attempt that has not beaten for this long is logged once (a third of the 30 s heartbeat timeout past its beat). */
export const SILENT_LOG_MS = 20_000;
const CHECK_MS = 5_000;

/** A running attempt the check looks at: when it started, its last beat, and whether it was logged silent. */
type Watched = { startedAt: number; lastBeat: () => number | undefined; warn: (silentMs: number) => void; told: boolean };

/**
 * One check for every running attempt of the process (not a timer each: a worker at 1,000 calls in flight would run
 * 200 a second), every `CHECK_MS`, stopped while none runs and never keeping the process alive.
 */
const watched = new Set<Watched>();
let check: NodeJS.Timeout | undefined;

function watch(attempt: Watched): () => void {
  watched.add(attempt);
  check ??= setInterval(() => {
    const now = Date.now();
    for (const a of watched) {
      const silentMs = now - (a.lastBeat() ?? a.startedAt);
      if (a.told || silentMs < SILENT_LOG_MS) continue;
      a.told = true;
      a.warn(silentMs);
    }
  }, CHECK_MS).unref();
  return () => {
    watched.delete(attempt);
    if (watched.size > 0 || !check) return;
    clearInterval(check);
    check = undefined;
  };
}

/**
 * Logs what says, after a heartbeat timeout, whether this worker ran the attempt and why it went quiet: the start of
 * every attempt after the first (retries are rare: a timed-out attempt no worker logged never reached one), an attempt
 * that sent no heartbeat for `SILENT_LOG_MS`, and one cancelled for another reason than a request (TIMED_OUT or
 * NOT_FOUND: the server had given it up; WORKER_SHUTDOWN). Nothing for an attempt that beats and ends.
 */
export function createAttemptLogInterceptor(logger: Logger): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { activityType, activityId, attempt, workflowExecution, currentAttemptScheduledTimestampMs } = ctx.info;
        const fields = { activityType, activityId, attempt, workflowId: workflowExecution?.workflowId };
        const startedAt = Date.now();
        if (attempt > 1) logger.info('activity attempt started', { ...fields, queuedMs: startedAt - currentAttemptScheduledTimestampMs });
        const unwatch = watch({
          startedAt,
          lastBeat: () => lastBeatAt(ctx),
          warn: (silentMs) => logger.warn('activity attempt silent', { ...fields, silentMs, runningMs: Date.now() - startedAt }),
          told: false,
        });
        try {
          return await next(input);
        } catch (err) {
          if (err instanceof CancelledFailure && err.message !== 'CANCELLED')
            logger.warn('activity attempt cancelled without a cancel request', {
              ...fields,
              reason: err.message,
              runningMs: Date.now() - startedAt,
            });
          throw err;
        } finally {
          unwatch();
        }
      },
    },
  });
}
