import type { LogEvent } from '../contracts/events.ts';
import { NOTIFY_MAX_BYTES } from '../notify/notifications.ts';

/**
 * The payload on the events channel: the mission, the seq of the last event its workflow emitted, so a relay that has
 * read that far already does not ask again, and `end` when that event was the terminal one (the mission's final
 * events are stored with its row). A payload without a seq (a worker of an earlier version) means "look".
 */
export function encodeEventsWake(missionId: string, lastSeq: number, ended = false): string {
  return `${missionId}:${lastSeq}${ended ? ':end' : ''}`;
}

export function parseEventsWake(payload: string): { missionId: string; lastSeq?: number; ended?: true } {
  const ended = payload.endsWith(':end');
  const rest = ended ? payload.slice(0, -':end'.length) : payload;
  const at = rest.lastIndexOf(':');
  const seq = at > 0 ? Number(rest.slice(at + 1)) : NaN;
  if (!Number.isSafeInteger(seq) || seq <= 0) return { missionId: payload };
  return { missionId: rest.slice(0, at), lastSeq: seq, ...(ended ? { ended: true as const } : {}) };
}

/**
 * The other payload on the events channel: events themselves, pushed by the worker that runs the activity whose
 * scheduling proves them recorded (events/progress-sinks.ts). A JSON object, so it never reads as a wake-up (those
 * start with a mission id). Undefined when it would not fit in a notification.
 */
export function encodeEventsPush(missionId: string, events: readonly LogEvent[]): string | undefined {
  const payload = JSON.stringify({ missionId, events });
  return Buffer.byteLength(payload) <= NOTIFY_MAX_BYTES ? payload : undefined;
}

/** The pushed events of a payload, or undefined when it is a wake-up (or not well formed). */
export function parseEventsPush(payload: string): { missionId: string; events: LogEvent[] } | undefined {
  if (!payload.startsWith('{')) return undefined;
  try {
    const push = JSON.parse(payload) as { missionId?: unknown; events?: unknown };
    if (typeof push.missionId !== 'string' || !Array.isArray(push.events) || push.events.length === 0) return undefined;
    return { missionId: push.missionId, events: push.events as LogEvent[] };
  } catch {
    return undefined;
  }
}
