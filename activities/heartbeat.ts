import { Context } from '@temporalio/activity';
import { beat } from './checkpoint.ts';

/**
 * Heartbeats every `intervalMs` while `fn` runs: a cancellation reaches an activity only through a heartbeat
 * response, so one blocked on I/O must keep heartbeating. Each beat carries the attempt's checkpoint. None at the
 * start: the SDK sends an activity's first beat to the server at once, which records it (and Temporal Cloud bills
 * it), so a beat there cost every model and tool call a server write however fast it ended; the heartbeat timeout
 * runs from the start all the same, and a cancel announced by the API beats at once (announced-cancel.ts).
 */
export async function withHeartbeat<T>(intervalMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
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
