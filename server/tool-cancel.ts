import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { findMissionEmbed } from '../db/embeds.ts';
import { feedHasToolCall } from '../db/feed.ts';
import type { ToolCancels } from '../notify/tool-cancels.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { TOOL_CALL_FINISHED, TOOL_CALL_NOT_FOUND, cancelToolUpdate, type ToolCancelReply } from '../contracts/mission.ts';
import { ConflictError, NotFoundError } from '../contracts/errors.ts';
import { sendUpdate } from './mission-update.ts';

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
    const reply = await sendUpdate(deps.temporal, mission.id, (handle) => handle.executeUpdate(cancelToolUpdate, { args: [toolUseId] }), {
      unavailable: 'no worker confirmed the cancel in time (it may still take effect): try again',
      refusals: {
        [TOOL_CALL_NOT_FOUND]: () => new NotFoundError('tool call not found'),
        [TOOL_CALL_FINISHED]: (message) => new ConflictError(message),
      },
    });
    if (reply) {
      // Accepted: announced again, so the stopped attempt beats at once and fetches the cancellation (not awaited: a
      // lost wake-up only leaves it to the next timer beat). By the tool-use id: the request may name the embed.
      void deps.toolCancels.announce(mission.id, reply.toolUseId);
      return reply;
    }
  }
  const known =
    (await feedHasToolCall(deps.db, mission.id, toolUseId)) || (await findMissionEmbed(deps.db, mission.id, toolUseId)) !== undefined;
  if (!known) throw new NotFoundError('tool call not found');
  throw new ConflictError('the mission has already finished');
}
