import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import { encodeEventsPush, encodeEventsWake } from './wire.ts';
import { EVENTS_HEADER, type EventsCursor } from '../contracts/events.ts';
import type { LogEvent, MissionSinks } from '../contracts/events.ts';
import { streamIdOf } from './stream-ids.ts';

/**
 * How long events an activity will claim wait for its start before they go as a wake-up: only a start that never
 * comes (the worker died, the activity's queue is backed up) waits this long; the relay then reads them by the query.
 */
export const CLAIM_WAIT_MS = 1_000;

/** The missions whose last claimed seq this process remembers, so a second start with the same cursor sends nothing. */
const REMEMBERED = 10_000;

type Waiting = {
  events: Array<{ event: LogEvent; digest: string }>;
  /** The highest seq an activity scheduled so far will claim. */
  claimed: number;
  timer?: NodeJS.Timeout;
};

/** The workflow's progress sink and the activity interceptor that pushes what it holds. */
export type ProgressSinks = { sinks: InjectedSinks<MissionSinks>; interceptor: ActivityInterceptorsFactory };

/**
 * The workflow's events reach the API's relay in one of two ways (docs/architecture.md, "The event stream"). The sink
 * hands this process what each activation of the workflow task logged, in one call as the activation ends, before the
 * task is recorded: the task could still be lost and run again differently. Events an activity scheduled by the same
 * task will claim wait here; the others go at once as a wake-up naming the last seq (the relay reads them by the
 * query), and so does the terminal event (the mission's row holds the final events). When an activity of the mission
 * starts in this process, its header holds the events cursor of the task that scheduled it
 * (workflows/events-cursor.ts): a cursor matching what waits here (same seq, same digest of the whole log) proves those
 * events recorded, and they go to the relay in one NOTIFY that no query follows. A start that finds nothing to push
 * (the task ran on another worker) sends a wake-up naming the cursor's seq. The notifications of one turn of the event
 * loop leave in one statement and never delay a workflow task or an activity.
 */
export function createProgressSinks(
  notifications: Notifications,
  opts: {
    claimWaitMs?: number;
    /** False: every event goes as a wake-up and the relay reads it by the query (bench/push-vs-query.ts compares). */
    push?: boolean;
  } = {},
): ProgressSinks {
  const { claimWaitMs = CLAIM_WAIT_MS, push = true } = opts;
  const waiting = new Map<string, Waiting>();
  const dirty = new Set<string>();
  const sent = new Map<string, number>(); // the last seq pushed or announced per mission, most recent last
  const outbox: string[] = [];
  const send = (payload: string) => {
    if (outbox.push(payload) === 1) setImmediate(() => void notifications.notify(CHANNELS.events, outbox.splice(0)));
  };
  const remember = (missionId: string, seq: number) => {
    sent.delete(missionId);
    sent.set(missionId, seq);
    if (sent.size > REMEMBERED) sent.delete(sent.keys().next().value!);
  };
  const wakeUp = (missionId: string) => {
    const w = waiting.get(missionId);
    waiting.delete(missionId);
    clearTimeout(w?.timer);
    const last = w?.events.at(-1);
    if (!last) return;
    remember(missionId, last.event.seq);
    send(encodeEventsWake(missionId, last.event.seq));
  };
  // After the task's sink calls: what no activity will claim goes now, the rest waits for the starts.
  const flush = () => {
    for (const missionId of dirty) {
      const w = waiting.get(missionId);
      if (!w) continue;
      if (!push || w.events.at(-1)!.event.seq > w.claimed) wakeUp(missionId);
      else w.timer ??= setTimeout(() => wakeUp(missionId), claimWaitMs);
    }
    dirty.clear();
  };

  function started(missionId: string, cursor: EventsCursor): void {
    if (!push) return;
    if ((sent.get(missionId) ?? 0) >= cursor.upTo) return; // pushed or announced already
    remember(missionId, cursor.upTo);
    const w = waiting.get(missionId);
    const i = w?.events.findIndex((e) => e.event.seq === cursor.upTo) ?? -1;
    // Not held here (the task ran on another worker) or held from another run of the task: the relay asks the query.
    if (!w || i < 0 || w.events[i]!.digest !== cursor.digest) return send(encodeEventsWake(missionId, cursor.upTo));
    const events = w.events.splice(0, i + 1).map((e) => e.event);
    send(encodeEventsPush(missionId, events) ?? encodeEventsWake(missionId, cursor.upTo));
    if (w.events.length > 0) return;
    clearTimeout(w.timer);
    waiting.delete(missionId);
  }

  /** One logged event: terminal, it goes at once; otherwise it waits here for the activation's flush. */
  function logged(missionId: string, event: LogEvent, digest: string, ended: boolean): void {
    if (ended) {
      // The final events are stored with the mission's row: the relay reads them there.
      clearTimeout(waiting.get(missionId)?.timer);
      waiting.delete(missionId);
      sent.delete(missionId);
      send(encodeEventsWake(missionId, event.seq, true));
      return;
    }
    let w = waiting.get(missionId);
    if (!w) waiting.set(missionId, (w = { events: [], claimed: 0 }));
    // A task run again after its first run was lost logs the same seqs anew: the new run's events replace them.
    while ((w.events.at(-1)?.event.seq ?? 0) >= event.seq) w.events.pop();
    w.events.push({ event, digest });
    if (dirty.size === 0) setImmediate(flush);
    dirty.add(missionId);
  }

  return {
    sinks: {
      progress: {
        logged: {
          fn(info, batch) {
            // An eval run's events go the same way; no activity claims them, so each goes as a wake-up.
            const missionId = streamIdOf(info.workflowId);
            if (missionId === undefined) return;
            const last = batch.events.length - 1;
            batch.events.forEach(({ event, digest }, i) => logged(missionId, event, digest, batch.ended && i === last));
            const w = waiting.get(missionId);
            if (w && batch.claimed > 0) w.claimed = Math.max(w.claimed, batch.claimed);
          },
          callDuringReplay: false,
        },
      },
    },
    interceptor: (ctx) => ({
      inbound: {
        async execute(input, next) {
          const header = input.headers[EVENTS_HEADER];
          const streamId = streamIdOf(ctx.info.workflowExecution?.workflowId ?? '');
          if (header && streamId !== undefined) started(streamId, defaultPayloadConverter.fromPayload<EventsCursor>(header));
          return next(input);
        },
      },
    }),
  };
}

/** For workers that only replay or test the workflow: its events go nowhere. */
export const IGNORED_PROGRESS_SINKS: InjectedSinks<MissionSinks> = { progress: { logged: { fn: () => {} } } };
