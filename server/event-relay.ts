import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.ts';
import { eventsQuery, missionWorkflowId, type MissionEvent } from '../workflows/definitions.ts';

/** A subscriber receives each event once, in seq order, then `end` after the terminal event (or on a fatal error). */
export type Subscriber = { afterSeq: number; onEvent(e: MissionEvent): void; onEnd(reason: 'done' | 'not_found'): void };

/** Fans mission events out to SSE clients: one query poller per mission, shared by all its subscribers. */
export type EventRelay = { subscribe(missionId: string, sub: Subscriber): () => void; pollerCount(): number; close(): void };

type Poller = { events: MissionEvent[]; subs: Set<Subscriber>; stopped: boolean };

export function createEventRelay(opts: { temporal: Client; logger: Logger; pollMs?: number }): EventRelay {
  const pollers = new Map<string, Poller>();
  const pollMs = opts.pollMs ?? 200;

  function deliver(p: Poller, sub: Subscriber): void {
    for (const e of p.events) {
      if (e.seq <= sub.afterSeq) continue;
      sub.afterSeq = e.seq;
      sub.onEvent(e);
    }
  }

  async function run(missionId: string, p: Poller): Promise<void> {
    const handle = opts.temporal.workflow.getHandle(missionWorkflowId(missionId));
    let failures = 0;
    while (!p.stopped && p.subs.size > 0) {
      try {
        const after = p.events.at(-1)?.seq ?? 0;
        const page = await opts.temporal.withDeadline(Date.now() + 10_000, () => handle.query(eventsQuery, after));
        p.events.push(...page.events.filter((e) => e.seq > after));
        failures = 0;
        for (const sub of p.subs) deliver(p, sub);
        if (page.done) return finish(missionId, p, 'done');
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return finish(missionId, p, 'not_found');
        failures += 1;
        if (failures % 10 === 1) opts.logger.warn('event poll failed; retrying', { missionId, err });
      }
      await new Promise((ok) => setTimeout(ok, failures ? Math.min(pollMs * 2 ** failures, 5_000) : pollMs));
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
        p = { events: [], subs: new Set(), stopped: false };
        pollers.set(missionId, p);
        p.subs.add(sub);
        void run(missionId, p);
      } else {
        p.subs.add(sub);
        deliver(p, sub);
      }
      const poller = p;
      return () => void poller.subs.delete(sub);
    },
    pollerCount: () => pollers.size,
    close() {
      for (const p of pollers.values()) p.stopped = true;
      pollers.clear();
    },
  };
}
