import { Context } from '@temporalio/activity';

/**
 * Heartbeats now and then on a timer while `fn` runs: a cancellation reaches an activity only through a
 * heartbeat response, so one blocked on I/O must keep heartbeating. `details` is sent with every heartbeat (a
 * heartbeat replaces the last one's details, which the next attempt reads back).
 */
export async function withHeartbeat<T>(intervalMs: number, fn: (signal: AbortSignal) => Promise<T>, details?: () => unknown): Promise<T> {
  const ctx = Context.current();
  const beat = () => ctx.heartbeat(details?.());
  beat();
  const timer = setInterval(beat, intervalMs);
  try {
    // Raced with the cancellation: code that ignores the signal must not finish later and report a cancelled call
    // as completed.
    return await Promise.race([fn(ctx.cancellationSignal), ctx.cancelled]);
  } catch (err) {
    // Report a cancellation as such (not as a failure), whatever error the library wrapped it in.
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    throw err;
  } finally {
    clearInterval(timer);
  }
}
