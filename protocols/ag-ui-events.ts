import { EventType, type BaseEvent } from '@ag-ui/core';
import type { LiveEvent, MissionEvent } from '../contracts/events.ts';
import { stateDelta } from './ag-ui-state.ts';

/** How one run ended, for the caller to close the stream with the answer (or the error). */
export type RunEnd = { status: 'answered' } | { status: 'failed'; message: string; code: string };

/**
 * Translates one AG-UI run's share of a mission's event stream into AG-UI events. A run is one exchange: it begins
 * at the mission's start (a new thread) or at the `message` event of the message this run sent (a continued thread),
 * and ends at the next `idle` or terminal status. Streamed text (`text_delta`) becomes one text message per turn;
 * a tool call is TOOL_CALL_START/ARGS/END when it starts (its input, which the event log does not hold, read by the
 * caller from the stored model reply) and TOOL_CALL_RESULT when it ends; an embed's change is a STATE_DELTA (ag-ui-state.ts).
 */
export function agUiTranslator(o: { runId: string; sentMessageId?: string | undefined; send: (e: BaseEvent) => void }) {
  let started = o.sentMessageId === undefined;
  let openText: string | undefined;
  let streamed = false;
  let texts = 0;
  let lastError: { message: string; code: string } | undefined;

  const closeText = () => {
    if (openText) o.send({ type: EventType.TEXT_MESSAGE_END, messageId: openText } as BaseEvent);
    openText = undefined;
  };

  return {
    /** Whether any text streamed in this run (if none, the caller sends the answer as one message). */
    streamed: () => streamed,
    closeText,
    /** A durable event: its AG-UI events, and the run's end when this event ends it. */
    onEvent(e: MissionEvent, toolInput?: Record<string, unknown>): RunEnd | undefined {
      if (!started) {
        started = e.type === 'message' && e.messageId === o.sentMessageId;
        return undefined;
      }
      switch (e.type) {
        case 'tool_start':
          closeText();
          // The answer is the text after the last tool call: whether it streamed is counted afresh.
          streamed = false;
          o.send({ type: EventType.TOOL_CALL_START, toolCallId: e.toolUseId, toolCallName: e.tool } as BaseEvent);
          if (toolInput !== undefined)
            o.send({ type: EventType.TOOL_CALL_ARGS, toolCallId: e.toolUseId, delta: JSON.stringify(toolInput) } as BaseEvent);
          o.send({ type: EventType.TOOL_CALL_END, toolCallId: e.toolUseId } as BaseEvent);
          return undefined;
        case 'tool_end':
          o.send({
            type: EventType.TOOL_CALL_RESULT,
            messageId: `${o.runId}/${e.toolUseId}`,
            toolCallId: e.toolUseId,
            role: 'tool',
            content: JSON.stringify({ status: e.status, durationMs: e.durationMs, ...(e.error ? { error: e.error } : {}) }),
          } as BaseEvent);
          return undefined;
        case 'embed':
          o.send(stateDelta(e));
          return undefined;
        case 'error':
          lastError = { message: e.message, code: e.phase };
          return undefined;
        case 'status':
          if (e.status === 'idle' || e.status === 'completed') return { status: 'answered' };
          // A cancellation says so in its code (its error event names the phase it hit, e.g. `tool`); a failure names its phase.
          if (e.status === 'cancelled')
            return { status: 'failed', message: lastError?.message ?? 'the mission was cancelled', code: 'cancelled' };
          if (e.status === 'failed')
            return { status: 'failed', message: lastError?.message ?? 'the mission failed', code: lastError?.code ?? 'failed' };
          return undefined;
        default:
          return undefined;
      }
    },
    /** A live event: streamed text opens (or continues) the turn's text message. */
    onLive(e: LiveEvent): void {
      if (!started || e.type !== 'text_delta' || e.text === '') return;
      if (!openText) {
        openText = `${o.runId}/text-${++texts}`;
        o.send({ type: EventType.TEXT_MESSAGE_START, messageId: openText, role: 'assistant' } as BaseEvent);
      }
      streamed = true;
      o.send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: openText, delta: e.text } as BaseEvent);
    },
  };
}
