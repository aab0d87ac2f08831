import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.ts';
import { eventsQuery, type EventsPage, type LogEvent, type MissionEvent } from '../contracts/events.ts';
import { workflowIdOf } from './stream-ids.ts';
import { releaseHeld } from './held-live.ts';
import { deliver, lastSeen, pause, type Poller } from './poller.ts';

// How far the timer's pause grows while timer rounds find the history unchanged: 10 s, 20 s, then 30 s at most. Each
// round costs the API one DescribeWorkflowExecution (500 quiet watched missions: 17/s at 30 s; 50/s at a flat 10 s
// took 6% more of a core in idle-watch), and a lost notification's events wait at most one pause.
const QUIET_FACTOR = 3;

// A query that returns less than a notification announced (or that was woken blind and finds nothing) may have
// overtaken the workflow task that sent it: it asks again after these pauses before waiting for the next wake-up.
const CHASE_MS = [25, 100];

export type RelayCounts = { queries: number; empty: number; endedFromRow: number; pushed: number; withoutQuery: number; unchanged: number };

export type QueryLoopDeps = {
  temporal: Client;
  logger: Logger;
  fallbackMs: number;
  /** The events a mission closed with, stored with its end (`db/missions.ts` findFinalEvents); null while it runs. */
  finalEvents?: (missionId: string) => Promise<MissionEvent[] | null>;
  /**
   * The events after `afterSeq` up to `upTo` that a session's earlier runs stored when they continued as new
   * (`db/mission-events.ts`): the latest run's query holds only those after `upTo`.
   */
  storedEvents: (missionId: string, afterSeq: number, upTo: number) => Promise<MissionEvent[]>;
  counts: RelayCounts;
  /** The loop is over: the poller leaves the relay, its subscribers get `onEnd(reason)` (none when it just stopped). */
  finish(missionId: string, p: Poller, reason?: 'done' | 'not_found'): void;
};

/**
 * One watched mission's loop. The workflow's events query stays the record; what changed is when the loop asks it:
 * when the worker says the workflow emitted (a wake-up or a push, events/relay.ts), and otherwise on a timer
 * (`fallbackMs`, 10 s, growing to 30 s while the mission stays quiet), so a lost notification delays an event by
 * seconds, never loses it. `waitMs`: how long the loop may wait before its first query, for a poller that starts from a
 * pushed log or on a mission that has only just started (the pushes or a wake-up bring what there is).
 */
export async function runQueryLoop(deps: QueryLoopDeps, missionId: string, p: Poller, waitMs = 0): Promise<void> {
  const { fallbackMs, counts } = deps;
  const handle = deps.temporal.workflow.getHandle(workflowIdOf(missionId));
  if (waitMs > 0) {
    await pause(p, waitMs);
    // Pushed events came meanwhile and nothing woke the loop: only the timer is left to ask.
    if (!p.woken && p.events.length > 0 && waitMs < fallbackMs) await pause(p, fallbackMs - waitMs);
  }
  let failures = 0;
  let chase = -1; // index into CHASE_MS while a query falls short of a wake-up; -1 otherwise
  let quietMs = fallbackMs;
  while (!p.stopped && p.subs.size > 0) {
    if (p.ended && (await endFromRow(deps, missionId, p))) return;
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
        const { historyLength } = await deps.temporal.withDeadline(Date.now() + 10_000, () => handle.describe());
        if (historyLength === p.historyLength) {
          counts.unchanged += 1;
          quietMs = Math.min(quietMs + fallbackMs, fallbackMs * QUIET_FACTOR);
          await pause(p, quietMs);
          continue;
        }
        p.historyLength = historyLength;
      }
      quietMs = fallbackMs;
      const after = lastSeen(p);
      p.queried = true;
      // A mission's events, or an eval run's: both workflows answer the one query.
      const page: EventsPage<LogEvent> = await deps.temporal.withDeadline(Date.now() + 10_000, () => handle.query(eventsQuery, after));
      // A session's run that continued as new: the events before its own are stored, read from there first.
      const stored =
        page.storedUpTo !== undefined && after < page.storedUpTo ? await deps.storedEvents(missionId, after, page.storedUpTo) : [];
      // Past what was read when it returned: events pushed while it was asked are in already.
      const fresh = [...stored, ...page.events].filter((e) => e.seq > lastSeen(p));
      counts.queries += 1;
      if (fresh.length === 0) counts.empty += 1;
      p.events.push(...fresh);
      failures = 0;
      for (const sub of p.subs) deliver(p, sub);
      releaseHeld(p);
      // A wake-up that arrived while this query was asked is spent if the query brought what it was for: the events
      // a notification announced, the turn that held live events waited for.
      if (p.woken && !p.nudged && !p.ended && p.notifiedSeq <= lastSeen(p) && p.held.length === 0) p.woken = false;
      if (page.done) return deps.finish(missionId, p, 'done');
      // Only a query that fell short of what a notification announced (or was woken without a seq) chases.
      const short = p.notifiedSeq > lastSeen(p) || (blind && fresh.length === 0);
      chase = !short ? -1 : chase >= 0 ? chase + 1 : 0;
      if (chase >= CHASE_MS.length) chase = -1;
      if (chase >= 0) pauseMs = CHASE_MS[chase]!;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return deps.finish(missionId, p, 'not_found');
      failures += 1;
      if (failures % 10 === 1) deps.logger.warn('events query failed; retrying', { missionId, err });
      pauseMs = Math.min(200 * 2 ** failures, 5_000);
    }
    await pause(p, pauseMs);
  }
  deps.finish(missionId, p);
}

/**
 * After the terminal event's wake-up: the mission's stored final events, if they continue what the relay has read
 * and end where the wake-up said. The workflow closed with them (it logs them once the activity that stored them
 * returned), and a closed run's query would cost a worker a replay of the whole run, queued behind live work.
 * False (read the log by the query instead) when they do not line up, are not stored, or cannot be read now.
 */
async function endFromRow(deps: QueryLoopDeps, missionId: string, p: Poller): Promise<boolean> {
  p.ended = false;
  const final = await deps.finalEvents?.(missionId).catch(() => null);
  const first = final?.[0];
  if (!first || final.at(-1)!.seq !== p.notifiedSeq || first.seq > lastSeen(p) + 1) return false;
  p.events.push(...final.filter((e) => e.seq > lastSeen(p)));
  deps.counts.endedFromRow += 1;
  if (!p.queried) deps.counts.withoutQuery += 1;
  for (const sub of p.subs) deliver(p, sub);
  releaseHeld(p, true);
  deps.finish(missionId, p, 'done');
  return true;
}
