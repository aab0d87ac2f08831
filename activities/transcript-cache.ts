import { randomBytes } from 'node:crypto';
import type { ToolOutputRow } from '../db/transcript.ts';
import type { ChatMessage } from '../model/model-types.ts';
import { jsonbOrder } from '../db/jsonb-order.ts';

/**
 * What a model call reads, as this worker last stored it: the conversation (as read: with a compaction in use, the
 * opening message and the turns from its cut on) up to position `nextSeq`, and the compaction in use.
 */
export type CachedConversation = {
  messages: ChatMessage[];
  nextSeq: number;
  compaction?: { uptoSeq: number; summary: string };
};

/**
 * Per-worker memory of what this worker wrote to a mission's transcript, so the next model call does not read it back
 * (Temporal's sticky queues send a mission's tasks to the worker that ran the last ones; in one process every call).
 *
 * Never served stale: each write gets a fresh random **stamp**, returned to the workflow with the activity's result;
 * a call passes the stamps of the results the workflow acted on, and an entry answers only when its stamp is that one.
 * An attempt retried on another worker, a call an interrupt cancelled, a reply rewritten by a later attempt or an entry
 * this worker never saw all leave the stamps apart, and the call reads Postgres as before. Bounded by `maxBytes`
 * (approximate text size), the least recently used mission dropped first.
 */
export type TranscriptCache = {
  /** A new stamp for a write about to be made. */
  stamp(): string;
  /** The conversation stored under `stamp`, or undefined (no stamp, another's, or forgotten). */
  conversation(missionId: string, stamp: string | undefined): CachedConversation | undefined;
  keepConversation(missionId: string, stamp: string, conversation: CachedConversation): void;
  /** A tool call's stored output (its JSON as written) under `stamp`, or undefined. */
  output(missionId: string, turn: number, toolUseId: string, stamp: string | undefined): ToolOutputRow | undefined;
  keepOutput(missionId: string, turn: number, row: { toolUseId: string; status: string; json: string }, stamp: string): void;
  /** Drops the outputs of turns before `turn` (their results are in the conversation now). */
  dropOutputsBefore(missionId: string, turn: number): void;
  /** The mission ended: nothing of it is read again. */
  forget(missionId: string): void;
};

type Output = { stamp: string; turn: number; toolUseId: string; status: string; json: string };
type Entry = { conversation?: { stamp: string; value: CachedConversation; bytes: number }; outputs: Map<string, Output> };

export function createTranscriptCache(maxBytes = 64 * 1024 * 1024): TranscriptCache {
  const missions = new Map<string, Entry>();
  let bytes = 0;

  const sizeOf = (e: Entry) => (e.conversation?.bytes ?? 0) + [...e.outputs.values()].reduce((n, o) => n + o.json.length, 0);
  function touch(missionId: string): Entry {
    const e = missions.get(missionId) ?? { outputs: new Map() };
    // Most recently used last: the first key is the one to drop.
    missions.delete(missionId);
    missions.set(missionId, e);
    return e;
  }
  function trim(): void {
    for (const [id, e] of missions) {
      if (bytes <= maxBytes || missions.size <= 1) return;
      bytes -= sizeOf(e);
      missions.delete(id);
    }
  }

  return {
    stamp: () => randomBytes(9).toString('base64url'),
    conversation(missionId, stamp) {
      const c = missions.get(missionId)?.conversation;
      if (!stamp || !c || c.stamp !== stamp) return undefined;
      touch(missionId);
      return c.value;
    },
    keepConversation(missionId, stamp, value) {
      const e = touch(missionId);
      const size = value.messages.reduce((n, m) => n + messageBytes(m), 0);
      bytes += size - (e.conversation?.bytes ?? 0);
      e.conversation = { stamp, value, bytes: size };
      trim();
    },
    output(missionId, turn, toolUseId, stamp) {
      const o = missions.get(missionId)?.outputs.get(`${turn}/${toolUseId}`);
      if (!stamp || !o || o.stamp !== stamp) return undefined;
      // Parsed at each use, as a read from Postgres would: the caller may change what it gets.
      return { tool_use_id: toolUseId, status: o.status, output: JSON.parse(o.json) as unknown };
    },
    keepOutput(missionId, turn, { toolUseId, status, json }, stamp) {
      const e = touch(missionId);
      const key = `${turn}/${toolUseId}`;
      bytes += json.length - (e.outputs.get(key)?.json.length ?? 0);
      e.outputs.set(key, { stamp, turn, toolUseId, status, json });
      trim();
    },
    dropOutputsBefore(missionId, turn) {
      const e = missions.get(missionId);
      if (!e) return;
      for (const [key, o] of e.outputs)
        if (o.turn < turn) {
          bytes -= o.json.length;
          e.outputs.delete(key);
        }
    },
    forget(missionId) {
      const e = missions.get(missionId);
      if (!e) return;
      bytes -= sizeOf(e);
      missions.delete(missionId);
    },
  };
}

/** A message's size in characters, roughly: its texts and its tool inputs as JSON (small). */
function messageBytes(m: ChatMessage): number {
  let n = 0;
  for (const b of m.content)
    n += b.type === 'text' ? b.text.length : b.type === 'tool_result' ? b.content.length : JSON.stringify(b.input).length;
  return n;
}

/**
 * A message as a read from Postgres returns it: jsonb orders an object's keys by length, then bytewise. Kept so, a
 * call served from memory sends the bytes a call that read Postgres would (the provider's prompt cache sees one prefix).
 */
export function asStored(message: ChatMessage): ChatMessage {
  return { ...message, content: message.content.map((b) => (b.type === 'tool_use' ? { ...b, input: jsonbOrder(b.input) } : b)) };
}
