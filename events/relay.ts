import type { Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.ts';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import type { LogEvent, MissionEvent } from '../contracts/events.ts';
import { parseLiveNotification } from './live-publisher.ts';
import { parseEventsJson, parseEventsWake } from './wire.ts';
import { createUnprovenEvents } from './unproven-events.ts';
import { liveArrived, releaseHeld } from './held-live.ts';
import { deliver, lastSeen, newPoller, wake, type Poller, type Subscriber } from './poller.ts';
import { createPushedLogs } from './pushed-logs.ts';
import { runQueryLoop, type QueryLoopDeps, type RelayCounts } from './query-loop.ts';

export type { Subscriber } from './poller.ts';

/** Fans mission events out to SSE clients: one loop per watched mission, shared by all its subscribers. */
export type EventRelay = {
  /** A mission's events by default; an eval run's (`LogEvent`) when the stream id names one (events/stream-ids.ts). */
  subscribe<E extends LogEvent = MissionEvent>(missionId: string, sub: Subscriber<E>): () => void;
  pollerCount(): number;
  /**
   * Events queries asked so far, how many of them found nothing new (what a watcher costs; for benches), how many
   * streams ended from their mission's stored final events (no query of the closed run), how many pushes of events
   * were taken instead of a query, how many streams ended without asking the query at all, and how many timer rounds
   * asked Temporal only for the history's length (and found it unchanged: no query).
   */
  queryCounts(): RelayCounts;
  close(): void;
};

// How long a stream of a mission that has just started waits for its first events before it asks the query.
const FRESH_WAIT_MS = 1_000;

/**
 * The API's side of the stream (docs/architecture.md, the `events/` row): it LISTENs for the workers' wake-ups,
 * unproven events and proofs (events/wire.ts), pairing the last two into pushes (events/unproven-events.ts), and for
 * live events (events/live-publisher.ts), and runs one loop per watched mission (events/query-loop.ts) that reads the
 * workflow's events query when a wake-up says there is something to read.
 */
export function createEventRelay(opts: {
  temporal: Client;
  logger: Logger;
  notifications: Notifications;
  fallbackPollMs?: number;
  finalEvents?: QueryLoopDeps['finalEvents'];
  storedEvents: QueryLoopDeps['storedEvents'];
  /** How long a fresh subscriber's loop waits for the first events before it asks (FRESH_WAIT_MS). */
  freshWaitMs?: number;
  /** How long unproven events wait for their proof, and a proof for its events (CLAIM_WAIT_MS). */
  claimWaitMs?: number;
}): EventRelay {
  const pollers = new Map<string, Poller>();
  const pushedLogs = createPushedLogs();
  const counts: RelayCounts = { queries: 0, empty: 0, endedFromRow: 0, pushed: 0, withoutQuery: 0, unchanged: 0 };
  const fallbackMs = opts.fallbackPollMs ?? 10_000;
  const freshWaitMs = opts.freshWaitMs ?? FRESH_WAIT_MS;
  const loop: QueryLoopDeps = {
    temporal: opts.temporal,
    logger: opts.logger,
    fallbackMs,
    ...(opts.finalEvents ? { finalEvents: opts.finalEvents } : {}),
    storedEvents: opts.storedEvents,
    counts,
    finish(missionId, p, reason) {
      if (pollers.get(missionId) === p) pollers.delete(missionId);
      if (!reason) return;
      for (const sub of p.subs) sub.onEnd(reason);
      p.subs.clear();
    },
  };

  // Unproven events wait here for their proof; released, they go as a push, and expired, as a wake-up would.
  const unproven = createUnprovenEvents({
    ...(opts.claimWaitMs !== undefined ? { waitMs: opts.claimWaitMs } : {}),
    released(missionId, events) {
      pushedLogs.pushed(missionId, events);
      take(missionId, events);
    },
    expired: (missionId, lastSeq) => woken(missionId, lastSeq, false),
  });

  const stopListening = [
    opts.notifications.listen(
      CHANNELS.events,
      (payload) => {
        const json = parseEventsJson(payload);
        if (json && 'proof' in json) return unproven.proof(json.missionId, json.proof);
        if (json) return unproven.unproven(json.missionId, json.unproven);
        const { missionId, lastSeq, ended = false } = parseEventsWake(payload);
        unproven.wokenUp(missionId, lastSeq, ended);
        woken(missionId, lastSeq, ended);
      },
      // The listening connection was re-opened: what was sent meanwhile is lost, so every loop asks now.
      () => {
        pushedLogs.clear();
        unproven.clear();
        pollers.forEach((p) => ((p.blind = true), wake(p)));
      },
    ),
    opts.notifications.listen(CHANNELS.live, (payload) => {
      const live = parseLiveNotification(payload);
      const p = live && pollers.get(live.missionId);
      if (p) liveArrived(p, live.event);
    }),
  ];

  /** A wake-up, or unproven events nothing proved in time: the mission's loop reads up to `lastSeq` by the query. */
  function woken(missionId: string, lastSeq: number | undefined, ended: boolean): void {
    pushedLogs.wokenUp(missionId, lastSeq, ended);
    const p = pollers.get(missionId);
    if (!p) return;
    // Read that far already (a query in flight when it was sent brought it): nothing to ask.
    if (lastSeq !== undefined && lastSeq <= lastSeen(p)) return;
    if (lastSeq !== undefined) p.notifiedSeq = Math.max(p.notifiedSeq, lastSeq);
    else p.blind = true;
    if (ended) p.ended = true;
    wake(p, lastSeq !== undefined);
  }

  /**
   * Events proven recorded (events/unproven-events.ts), seq without a gap: delivered as a query's answer would be, when
   * they continue what this relay has read; otherwise they say how far to read, like a wake-up.
   */
  function take(missionId: string, events: LogEvent[]): void {
    const p = pollers.get(missionId);
    const last = events.at(-1)!.seq;
    if (!p || last <= lastSeen(p)) return;
    if (events[0]!.seq > lastSeen(p) + 1) {
      p.notifiedSeq = Math.max(p.notifiedSeq, last);
      return wake(p, true);
    }
    counts.pushed += 1;
    p.events.push(...events.filter((e) => e.seq > lastSeen(p)));
    for (const sub of p.subs) deliver(p, sub);
    releaseHeld(p);
  }

  return {
    subscribe(missionId, typed) {
      // The stream id decides which workflow's events come (a mission's, or an eval run's).
      const sub = typed as Subscriber;
      let p = pollers.get(missionId);
      if (!p) {
        // A mission whose whole log this relay saw pushed: the stream starts from it, and the loop waits for wake-ups.
        const pushed = pushedLogs.log(missionId);
        const fresh = newPoller(pushed ?? []);
        pollers.set(missionId, fresh);
        fresh.subs.add(sub);
        deliver(fresh, sub);
        void runQueryLoop(loop, missionId, fresh, pushed ? fallbackMs : sub.fresh ? freshWaitMs : 0);
        p = fresh;
      } else {
        p.subs.add(sub);
        deliver(p, sub);
      }
      const poller = p;
      return () => {
        poller.subs.delete(sub);
        // The last subscriber gone: the loop ends now rather than at its next wake-up.
        if (poller.subs.size === 0) wake(poller);
      };
    },
    pollerCount: () => pollers.size,
    queryCounts: () => ({ ...counts }),
    close() {
      for (const stop of stopListening) stop();
      unproven.clear();
      for (const p of pollers.values()) {
        p.stopped = true;
        wake(p);
      }
      pollers.clear();
    },
  };
}
