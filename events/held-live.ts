import type { LiveEvent } from '../contracts/events.ts';
import { lastTurn, wake, type Poller } from './poller.ts';

// How long live events wait for their turn's event before they are sent anyway.
const HOLD_MS = 300;

/**
 * Live events travel on their own channel and can overtake the durable `turn` event of their turn: a client sees a
 * turn's text after that turn's `turn` event, so such text (and whatever follows it) is held until the relay has read
 * the turn, at most HOLD_MS. The turn's own notification is on its way (its proof leaves as the model call starts,
 * and the model's first text follows at once), so the loop is not woken for it: only when HOLD_MS pass without the
 * turn read (its notification lost or late) does the loop ask the query, as the text goes anyway.
 */
export function liveArrived(p: Poller, event: LiveEvent): void {
  if (p.held.length > 0 || ('turn' in event && event.turn > lastTurn(p))) {
    if (p.held.length === 0)
      setTimeout(() => {
        if (p.held.length > 0) wake(p, true);
        releaseHeld(p, true);
      }, HOLD_MS).unref();
    p.held.push(event);
    return;
  }
  for (const sub of p.subs) sub.onLive?.(event);
}

/** After a read: held live events go once their turn is read (`all`: now, whatever their turn). */
export function releaseHeld(p: Poller, all = false): void {
  const first = p.held[0];
  if (!first || (!all && 'turn' in first && first.turn > lastTurn(p))) return;
  const held = p.held.splice(0);
  for (const e of held) for (const sub of p.subs) sub.onLive?.(e);
}
