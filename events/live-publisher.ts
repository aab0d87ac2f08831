import type { LiveEvent, LivePublisher } from '../contracts/events.ts';
import { CHANNELS, NOTIFY_MAX_BYTES, type Notifications } from '../notify/notifications.ts';

/** One live event as it travels on the live channel. */
type Wire = { m: string; e: LiveEvent };

/**
 * Live events over NOTIFY, in order per mission: one notification in flight per mission at a time (the pool's
 * connections would otherwise commit two in either order), the text deltas queued meanwhile merged into one, and a
 * text too long for one payload split into several.
 */
export function createLivePublisher(notifications: Notifications): LivePublisher {
  const queues = new Map<string, LiveEvent[]>();

  async function drain(missionId: string, queue: LiveEvent[]): Promise<void> {
    while (queue.length > 0) {
      const batch = merge(queue.splice(0));
      await notifications.notify(
        CHANNELS.live,
        batch.flatMap((e) => encode(missionId, e)),
      );
    }
    queues.delete(missionId);
  }

  return {
    publish(missionId, event) {
      const queue = queues.get(missionId);
      if (queue) return void queue.push(event);
      const fresh = [event];
      queues.set(missionId, fresh);
      void drain(missionId, fresh);
    },
  };
}

/** Consecutive text deltas of one turn become one. */
function merge(events: LiveEvent[]): LiveEvent[] {
  const out: LiveEvent[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (e.type === 'text_delta' && last?.type === 'text_delta' && last.turn === e.turn)
      out[out.length - 1] = { ...last, text: last.text + e.text };
    else out.push(e);
  }
  return out;
}

/** The payloads of one event: a text delta is cut into pieces that each fit a notification. */
function encode(missionId: string, e: LiveEvent): string[] {
  const whole = JSON.stringify({ m: missionId, e } satisfies Wire);
  if (Buffer.byteLength(whole) <= NOTIFY_MAX_BYTES || e.type !== 'text_delta') return [whole];
  // JSON escapes can grow a character to six bytes: pieces of a sixth of the room always fit.
  const room = Math.floor((NOTIFY_MAX_BYTES - 200 - Buffer.byteLength(missionId)) / 6);
  const chars = [...e.text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += room)
    out.push(JSON.stringify({ m: missionId, e: { ...e, text: chars.slice(i, i + room).join('') } } satisfies Wire));
  return out;
}

/** A live-channel payload back as the mission id and its event; undefined when it is not one. */
export function parseLiveNotification(payload: string): { missionId: string; event: LiveEvent } | undefined {
  try {
    const wire = JSON.parse(payload) as Partial<Wire>;
    if (typeof wire.m !== 'string' || typeof wire.e !== 'object' || wire.e === null) return undefined;
    return { missionId: wire.m, event: wire.e };
  } catch {
    return undefined;
  }
}
