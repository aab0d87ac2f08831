import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { DATABASE_UNAVAILABLE } from '../contracts/mission.ts';
import { isDatabaseUnavailable } from '../db/connection-errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { MissionActivities } from '../contracts/activities.ts';
import { advanceCheckpoint, beat, keepAlive, readCheckpoint } from './checkpoint.ts';
import { scrubAddresses } from '../lib/scrub-addresses.ts';

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;
const HEARTBEAT_MS = 1_000;
// Give up this long before the attempt's own timeout, so the failure recorded says "database", not "timed out".
const ATTEMPT_MARGIN_MS = 1_500;
// An attempt holding a kept answer or a try's count beats once more and waits this long before it fails: the next
// attempt sees only details a heartbeat delivered (the failure report does not carry them:
// test/workflows/kept-answer.test.ts), and a heartbeat goes out within the worker's throttle (50 ms) plus one RPC.
// Within ATTEMPT_MARGIN_MS.
const BEAT_SETTLE_MS = 1_000;

type ActivityFn = (...args: never[]) => Promise<unknown>;

/**
 * The tries of a model call (a turn's, a compaction's summary, a script factory's script): every failure one of its
 * attempts reports spends one (the provider's 429, 5xx or unreachable endpoint, a malformed reply, a database outage
 * outlasting its wait), and the third is final. Temporal's attempts are the infrastructure's, unlimited within the call's
 * bound (workflows/activity-options.ts): an attempt that reported nothing and timed out on its heartbeat (a dispatch no
 * worker received, a worker that died) spends no try.
 */
export const MODEL_CALL_TRIES = 3;
const MODEL_CALLS = new Set<string>(['callModel', 'compactContext', 'writeScript'] satisfies Array<keyof MissionActivities>);

/**
 * Every activity of `activities`, made to outlive a database outage: an attempt that cannot reach Postgres waits
 * (heartbeating, cancellable) and runs again from the start, up to `maxWaitSeconds` and within the attempt's own
 * timeout, so the outage spends none of the retry policy's attempts (those stay for the provider's and tools' own
 * errors); a model call's failed attempts are counted as its tries (MODEL_CALL_TRIES). Running again is safe because every activity is idempotent (docs/decisions.md), and pays for no call twice:
 * a provider's or tool's answer is kept before it is stored (kept-answer.ts), so the run again only stores it. Errors leaving an
 * activity never carry a network address: workflows show their messages to API clients.
 */
export function outlastDatabaseOutages<A extends Record<string, ActivityFn>>(
  activities: A,
  opts: { maxWaitSeconds: number; logger: Logger },
): A {
  const wrapped: Record<string, ActivityFn> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args) => {
      // A step that runs long without beating itself still beats, under its heartbeat timeout (checkpoint.ts).
      const stopKeepAlive = keepAlive();
      try {
        return await runOutlasting(name, () => fn(...args), opts);
      } catch (err) {
        throw await failedAttempt(name, err);
      } finally {
        stopKeepAlive();
      }
    };
  }
  return wrapped as A;
}

async function runOutlasting<T>(name: string, attempt: () => Promise<T>, opts: { maxWaitSeconds: number; logger: Logger }): Promise<T> {
  const ctx = Context.current();
  const startedAt = Date.now();
  const { startToCloseTimeoutMs, scheduleToCloseTimeoutMs, scheduledTimestampMs } = ctx.info;
  const attemptEnd = Math.min(
    startToCloseTimeoutMs > 0 ? startedAt + startToCloseTimeoutMs : Infinity,
    scheduleToCloseTimeoutMs > 0 ? scheduledTimestampMs + scheduleToCloseTimeoutMs : Infinity,
  );
  let outageSince: number | undefined;
  let delay = FIRST_DELAY_MS;
  for (;;) {
    try {
      const result = await attempt();
      if (outageSince !== undefined) opts.logger.info('database reachable again', { activity: name, waitedMs: Date.now() - outageSince });
      return result;
    } catch (err) {
      if (ctx.cancellationSignal.aborted || err instanceof CancelledFailure) throw err;
      if (!isDatabaseUnavailable(err, { throughCauses: false })) throw scrubbed(err, name, opts.logger);
      if (outageSince === undefined) {
        outageSince = Date.now();
        opts.logger.warn('database unreachable: waiting for it', { activity: name, err: String(err) });
      }
      const giveUpAt = Math.min(outageSince + opts.maxWaitSeconds * 1000, attemptEnd - ATTEMPT_MARGIN_MS);
      if (Date.now() + delay > giveUpAt) {
        const waited = Math.round((Date.now() - outageSince) / 1000);
        throw ApplicationFailure.retryable(`the database was unreachable (waited ${waited} s in ${name})`, DATABASE_UNAVAILABLE);
      }
      await sleepHeartbeating(ctx, delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

/**
 * What a failed attempt reports, and what it leaves the next one: a model call's failure spends one of its tries,
 * counted in the checkpoint, and the last try's is final. An attempt holding a kept answer or a new count beats once
 * more and waits BEAT_SETTLE_MS (a count whose beat still does not arrive costs one try more, never one less).
 */
async function failedAttempt(name: string, err: unknown): Promise<unknown> {
  const ctx = Context.current();
  if (ctx.cancellationSignal.aborted || err instanceof CancelledFailure) return err;
  if (err instanceof ApplicationFailure && err.nonRetryable) return err;
  if (MODEL_CALLS.has(name)) {
    const failedTries = (readCheckpoint(ctx).failedTries ?? 0) + 1;
    if (failedTries >= MODEL_CALL_TRIES) return final(err);
    advanceCheckpoint({ failedTries }, ctx);
  }
  if (readCheckpoint(ctx).answer || MODEL_CALLS.has(name)) await sleepHeartbeating(ctx, BEAT_SETTLE_MS);
  return err;
}

/** The same failure, not to be retried (its type and details kept: the workflow's fallback decides on them). */
function final(err: unknown): ApplicationFailure {
  if (!(err instanceof ApplicationFailure)) {
    const e = err instanceof Error ? err : new Error(String(err));
    return ApplicationFailure.create({ message: e.message, type: e.name, nonRetryable: true });
  }
  return ApplicationFailure.create({
    message: err.message,
    ...(err.type ? { type: err.type } : {}),
    nonRetryable: true,
    ...(err.details ? { details: err.details } : {}),
    ...(err.cause ? { cause: err.cause } : {}),
  });
}

/**
 * Sleeps in heartbeat-sized steps: heartbeats keep the attempt alive and bring a cancellation in (sleep rejects); they
 * carry the checkpoint, so an answer kept before the failed store reaches the next attempt.
 */
async function sleepHeartbeating(ctx: Context, ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= HEARTBEAT_MS) {
    beat(ctx);
    await ctx.sleep(Math.min(left, HEARTBEAT_MS));
  }
}

/** The error to report, its message (and its causes') free of network addresses; the original goes to the log. */
function scrubbed(err: unknown, activity: string, logger: Logger): unknown {
  if (!(err instanceof Error) || !carriesAddress(err)) return err;
  logger.warn('activity error carried a network address: reported without it', { activity, err: String(err) });
  const failure = err instanceof ApplicationFailure ? err : undefined;
  return ApplicationFailure.create({
    message: scrubAddresses(err.message),
    type: failure?.type ?? err.name,
    nonRetryable: failure?.nonRetryable ?? false,
    ...(failure?.details ? { details: failure.details } : {}),
    ...(failure?.nextRetryDelay != null ? { nextRetryDelay: failure.nextRetryDelay } : {}),
    ...(failure?.category != null ? { category: failure.category } : {}),
  });
}

function carriesAddress(err: Error): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (scrubAddresses(e.message) !== e.message) return true;
  return false;
}
