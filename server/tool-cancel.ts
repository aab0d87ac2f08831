import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Kysely } from 'kysely';
import { findMissionEmbed } from '../db/embeds.ts';
import { feedHasToolCall } from '../db/feed.ts';
import type { ToolCancels } from '../notify/tool-cancels.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import {
  TOOL_CALL_FINISHED,
  TOOL_CALL_NOT_FOUND,
  cancelToolUpdate,
  missionWorkflowId,
  type ToolCancelReply,
} from '../contracts/mission.ts';
import { ConflictError, NotFoundError, UnavailableError } from '../contracts/errors.ts';

const UPDATE_DEADLINE_MS = 10_000;

/**
 * Cancels one tool call, named by its tool-use id or its embed id, with one update: the workflow's validator decides
 * (unknown → 404, over → 409) atomically with the cancel. A mission that is over cannot answer, and nothing can
 * change any more: Postgres says whether the call existed.
 */
export async function cancelToolCall(
  deps: { db: Kysely<Database>; temporal: Client; toolCancels: ToolCancels },
  mission: MissionRow,
  toolUseId: string,
): Promise<ToolCancelReply> {
  if (mission.status === 'running') {
    // The short path: the worker holding a running call stops it now, without waiting for the workflow's task (behind
    // every other mission's on a loaded worker). Only a running call can be stopped, and the workflow accepts every
    // cancel of a running call; the attempt then waits for the Update's cancellation, its record (announced-cancel.ts).
    void deps.toolCancels.announce(mission.id, toolUseId, 'stop');
    try {
      const handle = deps.temporal.workflow.getHandle(missionWorkflowId(mission.id));
      // Bounded: with no worker up, nothing can answer, and the client must not hang.
      const reply = await deps.temporal.withDeadline(Date.now() + UPDATE_DEADLINE_MS, () =>
        handle.executeUpdate(cancelToolUpdate, { args: [toolUseId] }),
      );
      // Accepted: announced again, so the stopped attempt beats at once and fetches the cancellation (not awaited: a
      // lost wake-up only leaves it to the next timer beat). By the tool-use id: the request may name the embed.
      void deps.toolCancels.announce(mission.id, reply.toolUseId);
      return reply;
    } catch (err) {
      if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
        throw new UnavailableError('no worker confirmed the cancel in time (it may still take effect): try again');
      const refusal = err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause : undefined;
      if (refusal?.type === TOOL_CALL_NOT_FOUND) throw new NotFoundError('tool call not found');
      if (refusal?.type === TOOL_CALL_FINISHED) throw new ConflictError(refusal.message);
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  const known =
    (await feedHasToolCall(deps.db, mission.id, toolUseId)) || (await findMissionEmbed(deps.db, mission.id, toolUseId)) !== undefined;
  if (!known) throw new NotFoundError('tool call not found');
  throw new ConflictError('the mission has already finished');
}
