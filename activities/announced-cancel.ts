import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ToolCancels } from '../notify/tool-cancels.ts';

/**
 * How long a call stopped by an announcement waits for Temporal's cancellation: the API announces a tool's cancel
 * before its Update (the tool stops at once, not after the workflow's task), so an Update that never lands (the API
 * died between the two, Temporal refused it) must not leave the attempt waiting out the tool's whole timeout. Longer
 * than the API's deadline on the Update (10 s).
 */
export const CANCEL_CONFIRM_WAIT_MS = 15_000;
/** The beat while a stopped call waits for its cancellation. */
const CONFIRM_BEAT_MS = 100;

/**
 * Runs `fn` with a signal that also aborts the moment the API announces this call's cancel (the tool's or the
 * provider's request is dropped at once), beats once the cancel is announced accepted (and every CONFIRM_BEAT_MS until
 * Temporal's cancellation arrives) instead of waiting for the next timer beat, and then waits for it: the attempt still ends through Temporal's cancellation,
 * which stays the record of what happened. One that does not come within CANCEL_CONFIRM_WAIT_MS ends the attempt as a
 * failure the model sees (the call was stopped; nobody confirmed why).
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
  let beating: NodeJS.Timeout | undefined;
  const stop = cancels.watch(call.missionId, call.callId, (phase) => {
    announced.abort(new Error('the call was cancelled'));
    // `stop` comes before the workflow has the cancel: a beat now would fetch nothing and hold back (throttled) the
    // one that matters. `accepted`: beat now, and again shortly until the cancellation arrives (a mission's cancel is
    // announced once Temporal has the request, before the workflow's task ran), not at the next timer beat (2 s).
    if (phase === 'stop') return;
    beat();
    beating ??= setInterval(beat, CONFIRM_BEAT_MS);
  });
  try {
    const out = await fn(AbortSignal.any([signal, announced.signal]));
    // Whatever the tool answered after its cancel was accepted, the call is cancelled.
    return announced.signal.aborted ? await confirmed(ctx) : out;
  } catch (err) {
    if (announced.signal.aborted && !signal.aborted) return await confirmed(ctx);
    throw err;
  } finally {
    clearInterval(beating);
    stop();
  }
}

/** Temporal's cancellation of the attempt, or a failure once CANCEL_CONFIRM_WAIT_MS pass without it. */
async function confirmed(ctx: Context): Promise<never> {
  let timer: NodeJS.Timeout | undefined;
  const unconfirmed = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () =>
        fail(
          ApplicationFailure.nonRetryable(
            'the call was stopped by a cancel its mission never confirmed (the cancel request failed): try the call again',
            'CancelUnconfirmed',
          ),
        ),
      CANCEL_CONFIRM_WAIT_MS,
    );
  });
  try {
    return await Promise.race([ctx.cancelled, unconfirmed]);
  } finally {
    clearTimeout(timer);
  }
}
