import { ActivityFailure, ApplicationFailure, TemporalFailure, isCancellation } from '@temporalio/workflow';
import { DATABASE_UNAVAILABLE, OUTPUT_INVALID, type MissionPhase } from '../contracts/mission.ts';

/** A short, user-facing message for a failure: the innermost cause's message, not the wrapper's. */
export function describeFailure(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof TemporalFailure || e instanceof Error) return e.message || e.name;
  return String(e);
}

/**
 * Whether an error ends the mission (recorded as failed or cancelled): a cancellation, a failed activity, an expected
 * application failure. Anything else (TypeError, ReferenceError...) is a bug in workflow code: rethrown as it is, it
 * fails the workflow *task*, which Temporal retries, so a fixed and redeployed worker resumes the run.
 */
export function endsMission(err: unknown): boolean {
  return isCancellation(err) || err instanceof TemporalFailure;
}

/**
 * The phase a failure is reported under: `database` when the database stayed unreachable, whichever step was running;
 * `output` when the answer missed the output schema after its correction.
 */
export function failurePhase(err: unknown, phase: MissionPhase): MissionPhase {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (!(e instanceof ApplicationFailure)) return phase;
  return e.type === DATABASE_UNAVAILABLE ? 'database' : e.type === OUTPUT_INVALID ? 'output' : phase;
}
