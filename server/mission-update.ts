import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { missionWorkflowId } from '../contracts/mission.ts';
import { UnavailableError } from '../contracts/errors.ts';

const UPDATE_DEADLINE_MS = 10_000;

export type MissionHandle = ReturnType<Client['workflow']['getHandle']>;

/** How the API answers one kind of Update: its 503 when no worker confirms in time, and its validator's refusals. */
export type UpdateAnswers = {
  /** The 503's message: what may still take effect, and what the client does next. */
  unavailable: string;
  /** An Update refusal's error type → the API error it becomes (404, 409, 400); any other refusal is rethrown. */
  refusals: Record<string, (message: string) => Error>;
};

/**
 * Sends one Update to a mission's workflow, bounded by a deadline (with no worker up nothing can answer, and the
 * client must not hang), and maps its outcome to the API's: the reply, a 503, a refusal's error, or undefined when the
 * workflow is gone (the caller says why from Postgres: the mission ended, or never started).
 */
export async function sendUpdate<T>(
  temporal: Client,
  missionId: string,
  send: (handle: MissionHandle) => Promise<T>,
  answers: UpdateAnswers,
): Promise<T | undefined> {
  try {
    const handle = temporal.workflow.getHandle(missionWorkflowId(missionId));
    return await temporal.withDeadline(Date.now() + UPDATE_DEADLINE_MS, () => send(handle));
  } catch (err) {
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) throw new UnavailableError(answers.unavailable);
    if (err instanceof WorkflowNotFoundError) return undefined;
    const refusal = err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause : undefined;
    const answer = refusal?.type ? answers.refusals[refusal.type] : undefined;
    if (answer) throw answer(refusal!.message);
    throw err;
  }
}
