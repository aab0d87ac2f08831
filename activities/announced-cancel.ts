import { Context } from '@temporalio/activity';
import type { ToolCancels } from '../notify/tool-cancels.ts';

/**
 * Runs `fn` with a signal that also aborts the moment the API announces this call's cancel (the tool's or the
 * provider's request is dropped at once), beats once to fetch Temporal's cancellation instead of waiting for the next timer beat, and then
 * waits for it: the attempt still ends through Temporal's cancellation, which stays the record of what happened.
 */
export async function withAnnouncedCancel<T>(
  cancels: ToolCancels | undefined,
  call: { missionId: string; callId: string },
  beat: () => void,
  signal: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (!cancels) return fn(signal);
  const ctx = Context.current();
  const announced = new AbortController();
  const stop = cancels.watch(call.missionId, call.callId, () => {
    announced.abort(new Error('the call was cancelled'));
    beat();
  });
  try {
    const out = await fn(AbortSignal.any([signal, announced.signal]));
    // Whatever the tool answered after its cancel was accepted, the call is cancelled.
    return announced.signal.aborted ? await ctx.cancelled : out;
  } catch (err) {
    if (announced.signal.aborted && !signal.aborted) return await ctx.cancelled;
    throw err;
  } finally {
    stop();
  }
}
