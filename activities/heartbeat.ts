import { Context } from '@temporalio/activity';
import { beat } from './checkpoint.ts';

/**
 * Heartbeats now and then on a timer while `fn` runs: a cancellation reaches an activity only through a
 * heartbeat response, so one blocked on I/O must keep heartbeating. Each beat carries the attempt's checkpoint.
 */
export async function withHeartbeat<T>(intervalMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  beat(ctx);
  const timer = setInterval(() => beat(ctx), intervalMs);
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
