import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MissionRow } from '../db/schema.ts';
import type { ToolCancels } from '../notify/tool-cancels.ts';
import {
  MAX_MESSAGE_CHARS,
  MESSAGE_INVALID,
  MESSAGE_QUEUE_FULL,
  MISSION_ENDED,
  NOT_A_SESSION,
  closeSessionUpdate,
  sendMessageUpdate,
  type MessageReply,
  type MissionMessage,
} from '../contracts/messages.ts';
import { ConflictError, TooLargeError, UnavailableError, ValidationError } from '../contracts/errors.ts';
import { sendUpdate, type MissionHandle } from './mission-update.ts';

const ENDED = 'the mission has ended and takes no more messages: start a new mission (POST /api/v1/missions)';

/**
 * Sends a message with one update: the workflow's validator decides (ended → 409, queue full → 409) atomically with
 * the queueing. The update is named by the idempotency key, so a retried request re-attaches to the first one (Temporal
 * dedupes update ids within a run) and answers what it answered.
 */
export async function sendMissionMessage(
  deps: { temporal: Client; toolCancels: ToolCancels },
  mission: MissionRow,
  body: MissionMessage & { idempotencyKey?: string | undefined },
): Promise<MessageReply> {
  if (body.text.length > MAX_MESSAGE_CHARS)
    throw new TooLargeError(`text is ${body.text.length} characters, over the limit of ${MAX_MESSAGE_CHARS}`, {
      fields: [{ field: 'text', message: `at most ${MAX_MESSAGE_CHARS} characters` }],
      limit: MAX_MESSAGE_CHARS,
    });
  const message: MissionMessage = {
    ...{ text: body.text, mode: body.mode },
    ...(body.cancelTools ? { cancelTools: true } : {}),
    ...(body.limits ? { limits: body.limits } : {}),
  };
  const updateId = body.idempotencyKey ? `message/${body.idempotencyKey}` : randomUUID();
  const { cancelled = [], ...reply } = await update(deps, mission, (handle) =>
    handle.executeUpdate(sendMessageUpdate, { args: [message], updateId }),
  );
  // The calls an interrupt cancelled hear it now, not at their next heartbeat (Temporal's cancellation stays the record).
  for (const callId of cancelled) void deps.toolCancels.announce(mission.id, callId);
  return reply;
}

/** Ends a session: idle, it ends `completed` now; while an exchange runs, once that exchange answers. */
export async function closeSession(deps: { temporal: Client }, mission: MissionRow): Promise<{ status: 'closing' }> {
  return update(deps, mission, (handle) => handle.executeUpdate(closeSessionUpdate));
}

/**
 * Sends one update to the mission's workflow, bounded by a deadline: an ended mission (or the workflow's MISSION_ENDED
 * refusal) is a 409 saying `ended`, no worker in time a 503.
 */
export async function update<T>(
  deps: { temporal: Client },
  mission: MissionRow,
  send: (handle: MissionHandle) => Promise<T>,
  ended = ENDED,
): Promise<T> {
  if (!['queued', 'starting', 'running', 'idle', 'paused'].includes(mission.status)) throw new ConflictError(ended);
  const reply = await sendUpdate(deps.temporal, mission.id, send, {
    unavailable: 'no worker confirmed the message in time (it may still be accepted): retry with the same idempotencyKey',
    refusals: {
      [MISSION_ENDED]: () => new ConflictError(ended),
      [MESSAGE_QUEUE_FULL]: (message) => new ConflictError(message),
      [NOT_A_SESSION]: (message) => new ConflictError(message),
      [MESSAGE_INVALID]: (message) => new ValidationError(message, { fields: [{ field: 'text', message }] }),
    },
  });
  if (reply !== undefined) return reply;
  // The workflow is gone: not yet started, or over.
  if (mission.status === 'starting') throw new UnavailableError('the mission is still starting: try again');
  throw new ConflictError(ended);
}
