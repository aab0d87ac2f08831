import type { EventsCursor, LogEvent } from '../contracts/events.ts';
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

/** A logged event and the events cursor's digest after it (workflows/events-cursor.ts), not yet proven recorded. */
export type UnprovenEvent = { event: LogEvent; digest: string };

/**
 * The two other payloads on the events channel, JSON objects so they never read as a wake-up (those start with a
 * mission id): a workflow task's *unproven* events, sent by the worker that ran the task as the activation ends, and a
 * *proof*, sent by whichever worker starts an activity that task scheduled: the cursor in its header (events/relay.ts
 * pairs them). Unproven events are undefined when they would not fit in a notification.
 */
export function encodeEventsUnproven(missionId: string, unproven: readonly UnprovenEvent[]): string | undefined {
  const payload = JSON.stringify({ missionId, unproven });
  return Buffer.byteLength(payload) <= NOTIFY_MAX_BYTES ? payload : undefined;
}

export function encodeEventsProof(missionId: string, proof: EventsCursor): string {
  return JSON.stringify({ missionId, proof: { upTo: proof.upTo, digest: proof.digest } });
}

export type EventsJsonPayload = { missionId: string; unproven: UnprovenEvent[] } | { missionId: string; proof: EventsCursor };

/** The unproven events or the proof of a payload; undefined when it is a wake-up (or not well formed). */
export function parseEventsJson(payload: string): EventsJsonPayload | undefined {
  if (!payload.startsWith('{')) return undefined;
  try {
    const p = JSON.parse(payload) as { missionId?: unknown; unproven?: unknown; proof?: Partial<EventsCursor> };
    if (typeof p.missionId !== 'string') return undefined;
    if (Array.isArray(p.unproven) && p.unproven.length > 0) return { missionId: p.missionId, unproven: p.unproven as UnprovenEvent[] };
    const { upTo, digest } = p.proof ?? {};
    if (Number.isSafeInteger(upTo) && upTo! > 0 && typeof digest === 'string')
      return { missionId: p.missionId, proof: { upTo: upTo!, digest } };
    return undefined;
  } catch {
    return undefined;
  }
}
