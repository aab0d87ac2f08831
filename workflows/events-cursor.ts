// Bundled into the workflow sandbox: deterministic code only. Module state is the workflow's own (the SDK gives each
// workflow its own module instances).
import type { EventsCursor, LogEvent, MissionEvent, ProgressBatch } from '../contracts/events.ts';

let cursor: EventsCursor | undefined;
// What this activation logged and claimed, handed to the worker in one sink call as it ends (events-interceptor.ts).
let batch: ProgressBatch | undefined;

/** The log grew by `event`: the cursor moves to its seq, the digest folds it in (FNV-1a over its JSON). */
export function advanceCursor(event: MissionEvent): EventsCursor {
  let h = cursor ? Number.parseInt(cursor.digest, 16) : 0x811c9dc5;
  const text = JSON.stringify(event);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  cursor = { upTo: event.seq, digest: h.toString(16).padStart(8, '0') };
  return cursor;
}

/** The cursor now; undefined before the first event (and in workflows that log none). */
export const currentCursor = (): EventsCursor | undefined => cursor;

/** A session's later run: the cursor goes on from where the run before left it (its events are stored, not logged here). */
export function resumeCursor(from: EventsCursor): void {
  cursor = { ...from };
}

const open = (): ProgressBatch => (batch ??= { events: [], ended: false, claimed: 0 });

/** `event` goes to the worker after this activation; `digest`: the cursor's after it ('' for a log nothing claims). */
export function hold(event: LogEvent, digest: string, ended = false): void {
  const b = open();
  b.events.push({ event, digest });
  if (ended) b.ended = true;
}

/** An activity scheduled now carries the cursor at `upTo`: its start will claim the events up to it. */
export function claim(upTo: number): void {
  const b = open();
  b.claimed = Math.max(b.claimed, upTo);
}

/** What this activation held, once (undefined when nothing). */
export function takeBatch(): ProgressBatch | undefined {
  const b = batch;
  batch = undefined;
  return b;
}
