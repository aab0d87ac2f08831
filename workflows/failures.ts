import { ActivityFailure, TemporalFailure } from '@temporalio/workflow';

/** A short, user-facing message for a failure: the innermost cause's message, not the wrapper's. */
export function describeFailure(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof TemporalFailure || e instanceof Error) return e.message || e.name;
  return String(e);
}
