// Bundled into the workflow sandbox: deterministic code only. Module state is the workflow's own (the SDK gives each
// workflow its own module instances).
import type { EventsCursor, MissionEvent } from '../contracts/events.ts';

let cursor: EventsCursor | undefined;

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
