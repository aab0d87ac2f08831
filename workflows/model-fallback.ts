import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ModelFallback } from '../contracts/mission.ts';
import { FALLBACK_REASONS, type FallbackReason, type ModelFailureDetails } from '../contracts/model.ts';

/** Where a failed model call goes on: the chain's next target, and why (the failure's kind and message). */
export type FallbackDecision = { from: string; to: string; reason: FallbackReason; message: string };

/**
 * The fallback a model call's final failure (its retries spent, read from history, so replay decides the same) calls
 * for: only an overload, a 5xx or an unreachable provider, and only when the chain names a next target. A 4xx about
 * the request, a cancellation or a timeout goes up as it is.
 */
export function fallbackAfter(err: unknown): FallbackDecision | undefined {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) return undefined;
  const failure = err.cause;
  const reason = /^Model\.(\w+)$/.exec(failure.type ?? '')?.[1] as FallbackReason | undefined;
  if (!reason || !FALLBACK_REASONS.includes(reason)) return undefined;
  const details = failure.details?.[0] as ModelFailureDetails | undefined;
  if (!details?.next) return undefined;
  return { from: details.target, to: details.next, reason, message: failure.message };
}

/**
 * Runs a model activity along the tier's chain: `call` once without a fallback, then again with the next step each
 * time its final failure calls for one (`switched` told first: the event); any other failure goes up as it is.
 */
export async function alongChain<T>(
  call: (fallback: ModelFallback | undefined) => Promise<T>,
  switched: (decision: FallbackDecision) => void,
): Promise<T> {
  let fallback: ModelFallback | undefined;
  for (;;) {
    try {
      return await call(fallback);
    } catch (err) {
      const next = fallbackAfter(err);
      if (!next) throw err;
      switched(next);
      fallback = { step: (fallback?.step ?? 0) + 1, from: next.from, to: next.to, reason: next.reason };
    }
  }
}
