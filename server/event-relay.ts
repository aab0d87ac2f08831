import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.ts';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import { eventsQuery, type LiveEvent, type MissionEvent } from '../contracts/events.ts';
import { missionWorkflowId } from '../contracts/mission.ts';
import { parseLiveNotification } from '../notify/live-publisher.ts';
import { parseEventsPush, parseEventsWake } from '../notify/events-wake.ts';

/**
 * A subscriber receives each event once, in seq order, then `end` after the terminal event (or on a fatal error);
 * live events (no seq, never replayed) as they arrive while it is subscribed.
 */
export type Subscriber = {
  afterSeq: number;
  /**
   * The mission started moments ago, so its first events are still to come: the relay waits for them (pushed, or a
   * wake-up) instead of asking the query at once, for up to FRESH_WAIT_MS.
   */
  fresh?: boolean;
  onEvent(e: MissionEvent): void;
  onLive?(e: LiveEvent): void;
  onEnd(reason: 'done' | 'not_found'): void;
};

/** Fans mission events out to SSE clients: one query loop per mission, shared by all its subscribers. */
export type EventRelay = {
  subscribe(missionId: string, sub: Subscriber): () => void;
  pollerCount(): number;
  /**
   * Events queries asked so far, how many of them found nothing new (what a watcher costs; for benches), how many
   * streams ended from their mission's stored final events (no query of the closed run), and how many pushes of
   * events were taken instead of a query, how many streams ended without asking the query at all, and how many
   * timer rounds asked Temporal only for the history's length (and found it unchanged: no query).
   */
  queryCounts(): { queries: number; empty: number; endedFromRow: number; pushed: number; withoutQuery: number; unchanged: number };
  close(): void;
};

type Poller = {
  events: MissionEvent[];
  subs: Set<Subscriber>;
  stopped: boolean;
  woken: boolean;
  /** Woken for another reason than a notification naming a seq (those are spent once a query read that far). */
  nudged: boolean;
  /** The highest seq a notification said the workflow has emitted: a query that returns less was early. */
  notifiedSeq: number;
  /** Woken without a seq (a worker of an earlier version, a re-opened LISTEN): an empty answer may have been early. */
  blind: boolean;
  wake?: () => void;
  /** Live events of a turn whose `turn` event the relay has not read yet (they travel on another channel). */
  held: LiveEvent[];
  /** Woken by the terminal event's wake-up (its seq in `notifiedSeq`): the final events are in the mission's row. */
  ended: boolean;
  /** The loop asked the query at least once (a stream served by pushes and the row never does). */
  queried: boolean;
  /** The workflow's history length when the loop last asked the query on its timer (see `run`). */
  historyLength?: number;
};

// The pushed logs the relay keeps for streams still to open: how many missions, and how many events each at most.
const RECENT_MISSIONS = 5_000;
const RECENT_EVENTS = 200;

// How long a stream of a mission that has just started waits for its first events before it asks the query.
const FRESH_WAIT_MS = 1_000;

// How far the timer's pause grows while timer rounds find the history unchanged: 10 s, 20 s, then 30 s at most. Each
// round costs the API one DescribeWorkflowExecution (500 quiet watched missions: 17/s at 30 s; 50/s at a flat 10 s
// took 6% more of a core in idle-watch), and a lost notification's events wait at most one pause.
const QUIET_FACTOR = 3;

// How long live events wait for their turn's event before they are sent anyway.
const HOLD_MS = 300;

// A query that returns less than a notification announced (or that was woken blind and finds nothing) may have
// overtaken the workflow task that sent it: it asks again after these pauses before waiting for the next wake-up.
const CHASE_MS = [25, 100];

/**
 * The workflow's events query stays the record; what changed is when the relay asks it: when the worker says the
 * workflow emitted (NOTIFY on the events channel), and otherwise on a timer (`fallbackPollMs`, 10 s, growing to 30 s
 * while the mission stays quiet: someone is watching it), so a lost notification delays an event by seconds, never
 * loses it.
 */
export function createEventRelay(opts: {
  temporal: Client;
  logger: Logger;
  notifications: Notifications;
  fallbackPollMs?: number;
  /** The events a mission closed with, stored with its end (`db/missions.ts` findFinalEvents); null while it runs. */
  finalEvents?: (missionId: string) => Promise<MissionEvent[] | null>;
  /** How long a fresh subscriber's loop waits for the first events before it asks (FRESH_WAIT_MS). */
  freshWaitMs?: number;
}): EventRelay {
  const pollers = new Map<string, Poller>();
  const recent = new Map<string, MissionEvent[]>(); // most recently pushed last
  const wokenUpTo = new Map<string, number>(); // the highest seq a wake-up named, per mission (most recent last)
  const counts = { queries: 0, empty: 0, endedFromRow: 0, pushed: 0, withoutQuery: 0, unchanged: 0 };
  const fallbackMs = opts.fallbackPollMs ?? 10_000;
  const freshWaitMs = opts.freshWaitMs ?? FRESH_WAIT_MS;

  // `announced`: a wake-up a query can spend (a notification naming a seq, live events waiting for their turn).
  const wake = (p: Poller, announced = false) => {
    p.woken = true;
    if (!announced) p.nudged = true;
    p.wake?.();
  };
  const stopListening = [
    opts.notifications.listen(
      CHANNELS.events,
      (payload) => {
        const pushed = parseEventsPush(payload);
        if (pushed) {
          keepRecent(pushed.missionId, pushed.events);
          return take(pushed.missionId, pushed.events);
        }
        const { missionId, lastSeq, ended } = parseEventsWake(payload);
        // Events that came by a wake-up are not in the pushed log: it is no longer whole (nor will be, if it comes later).
        if (ended || lastSeq === undefined) {
          recent.delete(missionId);
          if (ended) wokenUpTo.delete(missionId);
        } else if (lastSeq > (wokenUpTo.get(missionId) ?? 0)) {
          wokenUpTo.delete(missionId);
          wokenUpTo.set(missionId, lastSeq);
          if (wokenUpTo.size > RECENT_MISSIONS) wokenUpTo.delete(wokenUpTo.keys().next().value!);
          if (lastSeq > (recent.get(missionId)?.at(-1)?.seq ?? Infinity)) recent.delete(missionId);
        }
        const p = pollers.get(missionId);
        if (!p) return;
        // Read that far already (a query in flight when it was sent brought it): nothing to ask.
        if (lastSeq !== undefined && lastSeq <= lastSeen(p)) return;
        if (lastSeq !== undefined) p.notifiedSeq = Math.max(p.notifiedSeq, lastSeq);
        else p.blind = true;
        if (ended) p.ended = true;
        wake(p, lastSeq !== undefined);
      },
      // The listening connection was re-opened: what was sent meanwhile is lost, so every loop asks now.
      () => {
        recent.clear();
        wokenUpTo.clear();
        pollers.forEach((p) => ((p.blind = true), wake(p)));
      },
    ),
    opts.notifications.listen(CHANNELS.live, (payload) => {
      const live = parseLiveNotification(payload);
      const p = live && pollers.get(live.missionId);
      if (!p) return;
      // A client sees a turn's text after that turn's `turn` event: text that overtook it waits for the next read.
      if (p.held.length > 0 || ('turn' in live.event && live.event.turn > lastTurn(p))) {
        if (p.held.length === 0) setTimeout(() => release(p), HOLD_MS).unref();
        p.held.push(live.event);
        wake(p, true);
        return;
      }
      for (const sub of p.subs) sub.onLive?.(live.event);
    }),
  ];

  /**
   * The logs of recently started missions as workers pushed them: from seq 1, without a gap, and no wake-up since
   * naming a seq past them (a wake-up means events that were not pushed). A stream that opens on such a mission starts
   * from it instead of a query. Bounded by missions (the oldest dropped) and by events per mission.
   */
  function keepRecent(missionId: string, events: MissionEvent[]): void {
    const known = recent.get(missionId);
    recent.delete(missionId);
    const log = events[0]!.seq === 1 ? [] : known;
    if (!log || events[0]!.seq > (log.at(-1)?.seq ?? 0) + 1) return; // not from the start, or a gap
    log.push(...events.filter((e) => e.seq > (log.at(-1)?.seq ?? 0)));
    if (log.length > RECENT_EVENTS || (wokenUpTo.get(missionId) ?? 0) > log.at(-1)!.seq) return;
    recent.set(missionId, log);
    if (recent.size > RECENT_MISSIONS) recent.delete(recent.keys().next().value!);
  }

  /**
   * Events a worker pushed once their recording was proven (worker/progress-sinks.ts): delivered as a query's answer
   * would be, when they continue what this relay has read; otherwise they say how far to read, like a wake-up.
   */
  function take(missionId: string, events: MissionEvent[]): void {
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
    const first = p.held[0];
    if (first && (!('turn' in first) || first.turn <= lastTurn(p))) release(p);
  }

  function lastSeen(p: Poller): number {
    return p.events.at(-1)?.seq ?? 0;
  }
  function lastTurn(p: Poller): number {
    return p.events.findLast((e) => e.type === 'turn')?.turn ?? 0;
  }
  function release(p: Poller): void {
    const held = p.held.splice(0);
    for (const e of held) for (const sub of p.subs) sub.onLive?.(e);
  }

  function deliver(p: Poller, sub: Subscriber): void {
    for (const e of p.events) {
      if (e.seq <= sub.afterSeq) continue;
      sub.afterSeq = e.seq;
      sub.onEvent(e);
    }
  }

  function pause(p: Poller, ms: number): Promise<void> {
    if (p.woken) return Promise.resolve();
    return new Promise((ok) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        p.wake = undefined;
        ok();
      }
      p.wake = done;
    });
  }

  /**
   * After the terminal event's wake-up: the mission's stored final events, if they continue what the relay has read
   * and end where the wake-up said. The workflow closed with them (it logs them once the activity that stored them
   * returned), and a closed run's query would cost a worker a replay of the whole run, queued behind live work.
   * False (read the log by the query instead) when they do not line up, are not stored, or cannot be read now.
   */
  async function endFromRow(missionId: string, p: Poller): Promise<boolean> {
    p.ended = false;
    const final = await opts.finalEvents?.(missionId).catch(() => null);
    const first = final?.[0];
    if (!first || final.at(-1)!.seq !== p.notifiedSeq || first.seq > lastSeen(p) + 1) return false;
    p.events.push(...final.filter((e) => e.seq > lastSeen(p)));
    counts.endedFromRow += 1;
    if (!p.queried) counts.withoutQuery += 1;
    for (const sub of p.subs) deliver(p, sub);
    release(p);
    finish(missionId, p, 'done');
    return true;
  }

  /**
   * `waitMs`: how long the loop may wait before its first query, for a poller that starts from a pushed log or on a
   * mission that has only just started (the pushes or a wake-up bring what there is).
   */
  async function run(missionId: string, p: Poller, waitMs = 0): Promise<void> {
    const handle = opts.temporal.workflow.getHandle(missionWorkflowId(missionId));
    if (waitMs > 0) {
      await pause(p, waitMs);
      // Pushed events came meanwhile and nothing woke the loop: only the timer is left to ask.
      if (!p.woken && p.events.length > 0 && waitMs < fallbackMs) await pause(p, fallbackMs - waitMs);
    }
    let failures = 0;
    let chase = -1; // index into CHASE_MS while a query falls short of a wake-up; -1 otherwise
    let quietMs = fallbackMs;
    while (!p.stopped && p.subs.size > 0) {
      if (p.ended && (await endFromRow(missionId, p))) return;
      // A round the timer started (no wake-up, no chase): insurance against a notification the worker failed to send.
      const timed = p.queried && !p.woken && chase < 0;
      const blind = p.blind;
      p.woken = false;
      p.nudged = false;
      p.blind = false;
      let pauseMs = fallbackMs;
      try {
        if (timed) {
          // Events are logged only by workflow tasks, and each completed task lengthens the history: unchanged since the
          // last timer round, there is nothing to read. Temporal answers this alone; a query would cost the worker too.
          const { historyLength } = await opts.temporal.withDeadline(Date.now() + 10_000, () => handle.describe());
          if (historyLength === p.historyLength) {
            counts.unchanged += 1;
            quietMs = Math.min(quietMs + fallbackMs, fallbackMs * QUIET_FACTOR);
            await pause(p, quietMs);
            continue;
          }
          p.historyLength = historyLength;
        }
        quietMs = fallbackMs;
        const after = p.events.at(-1)?.seq ?? 0;
        p.queried = true;
        const page = await opts.temporal.withDeadline(Date.now() + 10_000, () => handle.query(eventsQuery, after));
        // Past what was read when it returned: events pushed while it was asked are in already.
        const fresh = page.events.filter((e) => e.seq > lastSeen(p));
        counts.queries += 1;
        if (fresh.length === 0) counts.empty += 1;
        p.events.push(...fresh);
        failures = 0;
        for (const sub of p.subs) deliver(p, sub);
        const first = p.held[0];
        if (first && (!('turn' in first) || first.turn <= lastTurn(p))) release(p);
        // A wake-up that arrived while this query was asked is spent if the query brought what it was for: the events
        // a notification announced, the turn that held live events waited for.
        if (p.woken && !p.nudged && !p.ended && p.notifiedSeq <= lastSeen(p) && p.held.length === 0) p.woken = false;
        if (page.done) return finish(missionId, p, 'done');
        // Only a query that fell short of what a notification announced (or was woken without a seq) chases.
        const short = p.notifiedSeq > lastSeen(p) || (blind && fresh.length === 0);
        chase = !short ? -1 : chase >= 0 ? chase + 1 : 0;
        if (chase >= CHASE_MS.length) chase = -1;
        if (chase >= 0) pauseMs = CHASE_MS[chase]!;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return finish(missionId, p, 'not_found');
        failures += 1;
        if (failures % 10 === 1) opts.logger.warn('events query failed; retrying', { missionId, err });
        pauseMs = Math.min(200 * 2 ** failures, 5_000);
      }
      await pause(p, pauseMs);
    }
    pollers.delete(missionId);
  }

  function finish(missionId: string, p: Poller, reason: 'done' | 'not_found'): void {
    pollers.delete(missionId);
    for (const sub of p.subs) sub.onEnd(reason);
    p.subs.clear();
  }

  return {
    subscribe(missionId, sub) {
      let p = pollers.get(missionId);
      if (!p) {
        // A mission whose whole log this relay saw pushed: the stream starts from it, and the loop waits for wake-ups.
        const pushed = recent.get(missionId);
        p = {
          events: pushed ? [...pushed] : [],
          subs: new Set(),
          stopped: false,
          woken: false,
          nudged: false,
          notifiedSeq: 0,
          blind: false,
          held: [],
          ended: false,
          queried: false,
        };
        pollers.set(missionId, p);
        p.subs.add(sub);
        deliver(p, sub);
        void run(missionId, p, pushed ? fallbackMs : sub.fresh ? freshWaitMs : 0);
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
      for (const p of pollers.values()) {
        p.stopped = true;
        wake(p);
      }
      pollers.clear();
    },
  };
}
