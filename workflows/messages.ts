import { ApplicationFailure, currentUpdateInfo } from '@temporalio/workflow';
import {
  MAX_MESSAGE_CHARS,
  MESSAGE_IDS_CARRIED,
  MESSAGE_INVALID,
  MESSAGE_QUEUE_FULL,
  MISSION_ENDED,
  type MessageReply,
  type MissionMessage,
  type QueuedMessage,
} from '../contracts/messages.ts';
import type { MissionBudget } from '../contracts/mission.ts';
import type { EventLog } from './event-log.ts';

/**
 * The messages a person sends a running mission (the `sendMessage` update): accepted into a queue in workflow memory
 * (the accepted updates in history rebuild it on replay), taken all at once at the next turn boundary. An interrupt
 * goes ahead of the queued messages and asks `interrupt` to cancel what runs now.
 */
export function createMessages(opts: {
  eventLog: EventLog;
  maxQueued: number;
  /** Cancels the in-flight model call, and the running tool calls when `cancelTools`: the ids of the calls cancelled. */
  interrupt: (cancelTools: boolean) => string[];
  /** Accepted by the run before this one (a session that continued as new), not delivered yet. */
  carried?: QueuedMessage[];
  /** The ids of the latest messages the runs before this one accepted. */
  earlierIds?: string[];
}) {
  const pending: QueuedMessage[] = [...(opts.carried ?? [])];
  // Temporal recognises a retried update by its id within one run only: a retry reaching a later run is matched here.
  const earlier = new Set(opts.earlierIds ?? []);
  const acceptedIds = [...(opts.earlierIds ?? [])];
  // Set once the mission will take no more messages (it is ending): checked in the validator, so atomically.
  let ended = false;
  // The limits the messages delivered in the current exchange set for it.
  let exchangeBudget: MissionBudget | undefined;
  const refuse = (type: string, message: string) => {
    throw ApplicationFailure.create({ type, message });
  };

  return {
    /** The update's validator: refuses, writing no history, what cannot be delivered. */
    validate(message: MissionMessage): void {
      if (ended) refuse(MISSION_ENDED, 'the mission has ended and takes no more messages: start a new mission (POST /api/v1/missions)');
      if (typeof message?.text !== 'string' || message.text.trim() === '') refuse(MESSAGE_INVALID, 'text must not be empty');
      if (message.text.length > MAX_MESSAGE_CHARS) refuse(MESSAGE_INVALID, `text is over ${MAX_MESSAGE_CHARS} characters`);
      if (message.mode !== 'queue' && message.mode !== 'interrupt') refuse(MESSAGE_INVALID, 'mode must be queue or interrupt');
      if (pending.length >= opts.maxQueued)
        refuse(MESSAGE_QUEUE_FULL, `${pending.length} messages already wait for delivery (MAX_QUEUED_MESSAGES=${opts.maxQueued})`);
    },
    /** Queues the message: an interrupt after the interrupts already waiting, ahead of every queued one. */
    accept(message: MissionMessage): MessageReply {
      // The update's id: a retried request with the same idempotency key re-attaches to this update, never a new one.
      const messageId = currentUpdateInfo()?.id ?? `message-${pending.length}`;
      if (earlier.has(messageId)) return { messageId, position: 0 };
      acceptedIds.push(messageId);
      const at = message.mode === 'interrupt' ? pending.filter((p) => p.mode === 'interrupt').length : pending.length;
      pending.splice(at, 0, { messageId, text: message.text, mode: message.mode, ...(message.limits ? { limits: message.limits } : {}) });
      const cancelled = message.mode === 'interrupt' ? opts.interrupt(message.cancelTools === true) : [];
      return { messageId, position: at + 1, ...(cancelled.length > 0 ? { cancelled } : {}) };
    },
    waiting: (): boolean => pending.length > 0,
    /** The messages waiting, in delivery order, and the latest ids accepted (what a run that continues as new carries over). */
    queued: (): QueuedMessage[] => [...pending],
    acceptedIds: (): string[] => acceptedIds.slice(-MESSAGE_IDS_CARRIED),
    /** Every waiting message, in delivery order, for the model call of `turn`; the event log says each was delivered. */
    take(turn: number): string[] {
      const taken = pending.splice(0);
      // A message's limits hold for the exchange it is delivered in; several messages: the lowest of each.
      for (const { limits } of taken) if (limits) exchangeBudget = tighter(exchangeBudget, limits);
      for (const m of taken) opts.eventLog.emit({ type: 'message', messageId: m.messageId, mode: m.mode, turn, text: m.text });
      return taken.map((m) => m.text);
    },
    /** The limits of the exchange in progress, from its messages; `newExchange` forgets them. */
    exchangeBudget: (): MissionBudget | undefined => exchangeBudget,
    newExchange(): void {
      exchangeBudget = undefined;
    },
    /** No message is taken from now on (the mission is ending). */
    end(): void {
      ended = true;
    },
    /** Whether the mission takes no more messages. */
    ended: (): boolean => ended,
  };
}
export type Messages = ReturnType<typeof createMessages>;

/** The lower of each limit that either sets. */
function tighter(a: MissionBudget | undefined, b: MissionBudget): MissionBudget {
  const low = (x: number | undefined, y: number | undefined) => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  const maxTokens = low(a?.maxTokens, b.maxTokens);
  const maxCostUsd = low(a?.maxCostUsd, b.maxCostUsd);
  return { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) };
}
