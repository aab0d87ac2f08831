import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.ts';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import { eventsQuery, missionWorkflowId, type LiveEvent, type MissionEvent } from '../workflows/definitions.ts';
import { parseLiveNotification } from '../notify/live-publisher.ts';

/**
 * A subscriber receives each event once, in seq order, then `end` after the terminal event (or on a fatal error);
 * live events (no seq, never replayed) as they arrive while it is subscribed.
 */
export type Subscriber = {
  afterSeq: number;
  onEvent(e: MissionEvent): void;
  onLive?(e: LiveEvent): void;
  onEnd(reason: 'done' | 'not_found'): void;
};

/** Fans mission events out to SSE clients: one query loop per mission, shared by all its subscribers. */
export type EventRelay = { subscribe(missionId: string, sub: Subscriber): () => void; pollerCount(): number; close(): void };

type Poller = {
  events: MissionEvent[];
  subs: Set<Subscriber>;
  stopped: boolean;
  woken: boolean;
  wake?: () => void;
  /** Live events of a turn whose `turn` event the relay has not read yet (they travel on another channel). */
  held: LiveEvent[];
};

// How long live events wait for their turn's event before they are sent anyway.
const HOLD_MS = 300;

// A query woken by a notification that finds nothing new may have overtaken the workflow task that sent it: it asks
// again after these pauses before waiting for the next wake-up.
const CHASE_MS = [25, 100];

/**
 * The workflow's events query stays the record; what changed is when the relay asks it: when the worker says the
 * workflow emitted (NOTIFY on the events channel), and otherwise every `fallbackPollMs`, so a lost notification
 * delays an event, never loses it.
 */
export function createEventRelay(opts: {
  temporal: Client;
  logger: Logger;
  notifications: Notifications;
  fallbackPollMs?: number;
}): EventRelay {
  const pollers = new Map<string, Poller>();
  const fallbackMs = opts.fallbackPollMs ?? 10_000;

  const wake = (p: Poller) => {
    p.woken = true;
    p.wake?.();
  };
  const stopListening = [
    opts.notifications.listen(
      CHANNELS.events,
      (missionId) => {
        const p = pollers.get(missionId);
        if (p) wake(p);
      },
      // The listening connection was re-opened: what was sent meanwhile is lost, so every loop asks now.
      () => pollers.forEach(wake),
    ),
    opts.notifications.listen(CHANNELS.live, (payload) => {
      const live = parseLiveNotification(payload);
      const p = live && pollers.get(live.missionId);
      if (!p) return;
      // A client sees a turn's text after that turn's `turn` event: text that overtook it waits for the next read.
      if (p.held.length > 0 || ('turn' in live.event && live.event.turn > lastTurn(p))) {
        if (p.held.length === 0) setTimeout(() => release(p), HOLD_MS).unref();
        p.held.push(live.event);
        wake(p);
        return;
      }
      for (const sub of p.subs) sub.onLive?.(live.event);
    }),
  ];

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

  async function run(missionId: string, p: Poller): Promise<void> {
    const handle = opts.temporal.workflow.getHandle(missionWorkflowId(missionId));
    let failures = 0;
    let chase = -1; // index into CHASE_MS while a wake-up has found nothing new; -1 otherwise
    while (!p.stopped && p.subs.size > 0) {
      const woken = p.woken;
      p.woken = false;
      let pauseMs = fallbackMs;
      try {
        const after = p.events.at(-1)?.seq ?? 0;
        const page = await opts.temporal.withDeadline(Date.now() + 10_000, () => handle.query(eventsQuery, after));
        const fresh = page.events.filter((e) => e.seq > after);
        p.events.push(...fresh);
        failures = 0;
        for (const sub of p.subs) deliver(p, sub);
        const first = p.held[0];
        if (first && (!('turn' in first) || first.turn <= lastTurn(p))) release(p);
        if (page.done) return finish(missionId, p, 'done');
        chase = fresh.length > 0 ? -1 : woken ? 0 : chase >= 0 ? chase + 1 : -1;
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
        p = { events: [], subs: new Set(), stopped: false, woken: false, held: [] };
        pollers.set(missionId, p);
        p.subs.add(sub);
        void run(missionId, p);
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
