import type { EventsCursor, LogEvent } from '../contracts/events.ts';
import type { UnprovenEvent } from './wire.ts';

/**
 * How long unproven events wait for their proof, and a proof for the events it proves, before the relay reads the
 * query instead: only a start that never comes (the worker died, the activity's queue is backed up) or a notification
 * lost on the way waits this long.
 */
export const CLAIM_WAIT_MS = 1_000;

// How many missions' unproven events and proofs a relay keeps at once, and how many events each at most: past either
// bound the oldest go as if their wait were over (the query reads them).
const MISSIONS = 5_000;
const EVENTS = 200;

type Waiting = {
  events: Array<UnprovenEvent & { until: number }>; // by seq
  proofs: Array<EventsCursor & { until: number }>;
  timer?: NodeJS.Timeout;
};

/**
 * The relay's pairing of the two halves of a push (events/progress-sinks.ts sends both): a workflow task's unproven
 * events, from the worker that ran the task, and a proof, from whichever worker started an activity the task scheduled.
 * A proof whose seq and digest match an event held releases the events up to it, in runs without a gap: they are
 * recorded. Events no proof comes for, and a proof nothing held matches, within `waitMs`, expire: the relay reads up
 * to their seq by the query, as it does for a wake-up. Either half may arrive first (two connections' notifications
 * commit in either order). Seqs a wake-up named or a release carried are settled: nothing about them waits or expires.
 */
export function createUnprovenEvents(opts: {
  waitMs?: number;
  /** Proven events, seq without a gap: delivered as a push. */
  released(missionId: string, events: LogEvent[]): void;
  /** Nothing proved the events up to `lastSeq` in time: the relay reads them by the query. */
  expired(missionId: string, lastSeq: number): void;
}) {
  const waitMs = opts.waitMs ?? CLAIM_WAIT_MS;
  const waiting = new Map<string, Waiting>(); // least recently changed first
  const settled = new Map<string, number>(); // the highest seq released or named by a wake-up, per mission

  const settledSeq = (missionId: string) => settled.get(missionId) ?? 0;
  function settle(missionId: string, seq: number): void {
    if (seq <= settledSeq(missionId)) return;
    settled.delete(missionId);
    settled.set(missionId, seq);
    if (settled.size > MISSIONS * 2) settled.delete(settled.keys().next().value!);
  }

  /** Takes `missionId`'s record to the end of the order (or makes one), evicting the oldest past the bound. */
  function touch(missionId: string): Waiting {
    const w = waiting.get(missionId) ?? { events: [], proofs: [] };
    waiting.delete(missionId);
    waiting.set(missionId, w);
    if (waiting.size > MISSIONS) expire(waiting.keys().next().value!, Infinity);
    return w;
  }

  /** Releases what a proof held here proves; then drops what is settled and times what is left. */
  function pair(missionId: string, w: Waiting): void {
    let proven = -1;
    for (const proof of w.proofs) {
      const i = w.events.findIndex((e) => e.event.seq === proof.upTo);
      if (i > proven && w.events[i]!.digest === proof.digest) proven = i;
    }
    if (proven >= 0) {
      const events = w.events.splice(0, proven + 1).map((e) => e.event);
      settle(missionId, events.at(-1)!.seq);
      for (let start = 0, i = 1; i <= events.length; i++) {
        if (i < events.length && events[i]!.seq === events[i - 1]!.seq + 1) continue;
        opts.released(missionId, events.slice(start, i));
        start = i;
      }
    }
    const done = settledSeq(missionId);
    w.events = w.events.filter((e) => e.event.seq > done);
    w.proofs = w.proofs.filter((p) => p.upTo > done);
    if (w.events.length === 0 && w.proofs.length === 0) return forget(missionId);
    clearTimeout(w.timer);
    const next = Math.min(...w.events.map((e) => e.until), ...w.proofs.map((p) => p.until));
    w.timer = setTimeout(() => expire(missionId, Date.now()), Math.max(0, next - Date.now()));
    w.timer.unref?.();
  }

  /** What waited until `now` or longer has waited enough: the relay reads up to its highest seq by the query. */
  function expire(missionId: string, now: number): void {
    const w = waiting.get(missionId);
    if (!w) return;
    let last = 0;
    for (const e of w.events) if (e.until <= now) last = Math.max(last, e.event.seq);
    for (const p of w.proofs) if (p.until <= now) last = Math.max(last, p.upTo);
    w.events = w.events.filter((e) => e.until > now);
    w.proofs = w.proofs.filter((p) => p.until > now);
    if (last > settledSeq(missionId)) {
      settle(missionId, last);
      opts.expired(missionId, last);
    }
    pair(missionId, w);
  }

  function forget(missionId: string): void {
    clearTimeout(waiting.get(missionId)?.timer);
    waiting.delete(missionId);
  }

  return {
    /** A task's events as its worker logged them; a task run again logs the same seqs anew, and they replace them. */
    unproven(missionId: string, events: UnprovenEvent[]): void {
      const first = events[0]!.event.seq;
      const last = events.at(-1)!.event.seq;
      if (last <= settledSeq(missionId)) return; // a wake-up said to read them already
      const w = touch(missionId);
      const until = Date.now() + waitMs;
      const kept = w.events.filter((e) => e.event.seq < first || e.event.seq > last);
      w.events = [...kept, ...events.map((e) => ({ ...e, until }))].sort((a, b) => a.event.seq - b.event.seq);
      if (w.events.length > EVENTS) {
        const over = w.events.length - EVENTS;
        for (const e of w.events.slice(0, over)) e.until = 0;
        expire(missionId, 0);
      }
      pair(missionId, w);
    },
    /** An activity started with this cursor: the task that logged the events up to it was recorded. */
    proof(missionId: string, cursor: EventsCursor): void {
      if (cursor.upTo <= settledSeq(missionId)) return; // released already, or a wake-up said to read them
      const w = touch(missionId);
      w.proofs.push({ ...cursor, until: Date.now() + waitMs });
      pair(missionId, w);
    },
    /** A wake-up named `lastSeq`: what waits up to it is read by the query; after the terminal event, nothing waits. */
    wokenUp(missionId: string, lastSeq: number | undefined, ended: boolean): void {
      if (ended) {
        forget(missionId);
        settled.delete(missionId);
        return;
      }
      if (lastSeq === undefined) return;
      settle(missionId, lastSeq);
      const w = waiting.get(missionId);
      if (w) pair(missionId, w);
    },
    /** How many missions have something waiting (for tests and benches). */
    size: () => waiting.size,
    /** The listening connection was re-opened: every loop asks now, and what was sent meanwhile is lost anyway. */
    clear(): void {
      for (const missionId of [...waiting.keys()]) forget(missionId);
      settled.clear();
    },
  };
}
export type UnprovenEvents = ReturnType<typeof createUnprovenEvents>;
