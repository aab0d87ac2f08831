import type { LiveEvent, LogEvent } from '../contracts/events.ts';

/**
 * A subscriber receives each event once, in seq order, then `end` after the terminal event (or on a fatal error);
 * live events (no seq, never replayed) as they arrive while it is subscribed.
 */
export type Subscriber<E extends LogEvent = LogEvent> = {
  afterSeq: number;
  /**
   * The mission started moments ago, so its first events are still to come: the relay waits for them (pushed, or a
   * wake-up) instead of asking the query at once, for up to FRESH_WAIT_MS.
   */
  fresh?: boolean;
  onEvent(e: E): void;
  onLive?(e: LiveEvent): void;
  onEnd(reason: 'done' | 'not_found'): void;
};

/** One watched mission in the relay: what it has read, who is subscribed, and why its loop should look again. */
export type Poller = {
  events: LogEvent[];
  subs: Set<Subscriber>;
  stopped: boolean;
  woken: boolean;
  /** Woken for another reason than a notification naming a seq (those are spent once a query read that far). */
  nudged: boolean;
  /** The highest seq a notification said the workflow has emitted: a query that returns less was early. */
  notifiedSeq: number;
  /** Woken without a seq (a re-opened LISTEN): an empty answer may have been early. */
  blind: boolean;
  wake?: () => void;
  /** Live events of a turn whose `turn` event the relay has not read yet (they travel on another channel). */
  held: LiveEvent[];
  /** Woken by the terminal event's wake-up (its seq in `notifiedSeq`): the final events are in the mission's row. */
  ended: boolean;
  /** The loop asked the query at least once (a stream served by pushes and the row never does). */
  queried: boolean;
  /** The workflow's history length when the loop last asked the query on its timer (events/query-loop.ts). */
  historyLength?: number;
};

export function newPoller(events: LogEvent[]): Poller {
  return {
    events,
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
}

export function lastSeen(p: Poller): number {
  return p.events.at(-1)?.seq ?? 0;
}

export function lastTurn(p: Poller): number {
  return p.events.findLast((e) => e.type === 'turn')?.turn ?? 0;
}

/** Hands a subscriber the events it has not had yet. */
export function deliver(p: Poller, sub: Subscriber): void {
  for (const e of p.events) {
    if (e.seq <= sub.afterSeq) continue;
    sub.afterSeq = e.seq;
    sub.onEvent(e);
  }
}

/** `announced`: a wake-up a query can spend (a notification naming a seq, live events waiting for their turn). */
export function wake(p: Poller, announced = false): void {
  p.woken = true;
  if (!announced) p.nudged = true;
  p.wake?.();
}

/** Waits `ms`, or less when the poller is woken meanwhile (at once when it already was). */
export function pause(p: Poller, ms: number): Promise<void> {
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
