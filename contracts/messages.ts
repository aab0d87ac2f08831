import { defineUpdate } from '@temporalio/workflow';
import type { MissionBudget } from './mission.ts';

/** Messages to a mission: a person steers it while it runs, or continues a session that answered. */

/**
 * `queue`: delivered at the next turn boundary (after the running tool calls end, before the next model call), in the
 * order sent. `interrupt`: cancels the in-flight model call (with `cancelTools`, the running tool calls too) and starts
 * the next model call with the message at once; once the model has answered, it cancels nothing and just goes first.
 */
export type MessageMode = 'queue' | 'interrupt';
/** `limits`: token and cost limits of the exchange the message is delivered in, beside the whole session's budget. */
export type MissionMessage = { text: string; mode: MessageMode; cancelTools?: boolean; limits?: MissionBudget };
/** A message accepted and not yet delivered. */
export type QueuedMessage = { messageId: string; text: string; mode: MessageMode; limits?: MissionBudget };
/**
 * `messageId` is the update's id (a retried request with the same idempotency key names the same update); `position`: 1
 * is next, 0 when an earlier run of a session that continued as new took it already (a retried request: not taken twice).
 */
export type MessageReply = {
  messageId: string;
  position: number;
  /** What an interrupt cancelled: the model call's id and the tool calls' ids, for the API to announce (not sent to clients). */
  cancelled?: string[];
};

/** MAX_QUEUED_MESSAGES' default, and the limit of a mission started without one in its input. */
export const DEFAULT_MAX_QUEUED_MESSAGES = 20;
/**
 * SESSION_HISTORY_EVENTS' default: a session's run continues as new at its next idle point once its history holds this
 * many events (bench/session-history.ts: a 5-exchange session's history is about 150 events).
 */
export const DEFAULT_SESSION_HISTORY_EVENTS = 200;
/** How many of the latest message ids a session's run carries when it continues as new (Temporal knows an update id within its run only). */
export const MESSAGE_IDS_CARRIED = 50;
/** The longest message text, in characters (413 beyond it). */
export const MAX_MESSAGE_CHARS = 32_000;

/** Why a message is refused (the failure type of the rejected update). */
export const MISSION_ENDED = 'MissionEnded';
export const MESSAGE_QUEUE_FULL = 'MessageQueueFull';
export const MESSAGE_INVALID = 'MessageInvalid';
/** Why a close is refused: the mission is not a session (it ends when it answers; a cancel stops it). */
export const NOT_A_SESSION = 'NotASession';

/**
 * Sends a message. The validator refuses, writing no history, a mission that ended and cannot continue, an empty or
 * oversized text, and a queue already holding MAX_QUEUED_MESSAGES; accepted, the reply says where the message stands.
 */
export const sendMessageUpdate = defineUpdate<MessageReply, [message: MissionMessage]>('sendMessage');

/** Ends an idle session `completed` (or, while an exchange runs, once it answers). Refused once the mission ended. */
export const closeSessionUpdate = defineUpdate<{ status: 'closing' }, []>('closeSession');
