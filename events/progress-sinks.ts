import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import { encodeEventsProof, encodeEventsUnproven, encodeEventsWake, type UnprovenEvent } from './wire.ts';
import { EVENTS_HEADER, type EventsCursor } from '../contracts/events.ts';
import type { MissionSinks } from '../contracts/events.ts';
import { streamIdOf } from './stream-ids.ts';

/** The missions whose last proven seq this process remembers, so a second start with the same cursor sends nothing. */
const REMEMBERED = 10_000;

type Logged = {
  events: UnprovenEvent[];
  /** The highest seq an activity scheduled by these activations will claim. */
  claimed: number;
};

/** The workflow's progress sink and the activity interceptor that sends the proofs. */
export type ProgressSinks = { sinks: InjectedSinks<MissionSinks>; interceptor: ActivityInterceptorsFactory };

/**
 * The worker's half of the stream (docs/architecture.md, the `events/` row). The sink hands this process what each
 * activation of a workflow task logged, in one call as the activation ends, before the task is recorded: the task
 * could still be lost and run again differently. Events an activity the task scheduled will claim go to the relays as
 * *unproven*, with their digests; the others go as a wake-up naming the last seq (the relay reads them by the query),
 * and so does the terminal event (the mission's row holds the final events). Whichever worker starts an activity with
 * an events cursor in its header (workflows/events-cursor.ts) sends that cursor as a *proof*: it proves the task that
 * scheduled the activity recorded, and each relay releases the unproven events it matches (events/unproven-events.ts).
 * Nothing waits here. The notifications of one turn of the event loop leave in one statement and never delay a
 * workflow task or an activity.
 */
export function createProgressSinks(
  notifications: Notifications,
  opts: {
    /** False: every event goes as a wake-up and the relay reads it by the query (bench/push-vs-query.ts compares). */
    push?: boolean;
  } = {},
): ProgressSinks {
  const { push = true } = opts;
  const logged = new Map<string, Logged>(); // this event-loop turn's activations, per mission
  const proven = new Map<string, number>(); // the last seq proven per mission, most recent last
  const outbox: string[] = [];
  const send = (payload: string) => {
    if (outbox.push(payload) === 1) setImmediate(() => void notifications.notify(CHANNELS.events, outbox.splice(0)));
  };
  // After the turn's sink calls: what an activity will claim goes unproven, anything past it makes the whole a wake-up.
  let flushing = false;
  const flush = () => {
    flushing = false;
    for (const [missionId, { events, claimed }] of logged) {
      const last = events.at(-1)!.event.seq;
      const unproven = push && last <= claimed ? encodeEventsUnproven(missionId, events) : undefined;
      send(unproven ?? encodeEventsWake(missionId, last));
    }
    logged.clear();
  };

  function started(missionId: string, cursor: EventsCursor): void {
    if (!push || (proven.get(missionId) ?? 0) >= cursor.upTo) return; // another activity of the task, or a retry
    proven.delete(missionId);
    proven.set(missionId, cursor.upTo);
    if (proven.size > REMEMBERED) proven.delete(proven.keys().next().value!);
    send(encodeEventsProof(missionId, cursor));
  }

  return {
    sinks: {
      progress: {
        logged: {
          fn(info, batch) {
            // An eval run's events go the same way; no activity claims them, so each goes as a wake-up.
            const missionId = streamIdOf(info.workflowId);
            if (missionId === undefined) return;
            let l = logged.get(missionId);
            if (batch.ended) {
              // The final events are stored with the mission's row: the relay reads them there.
              logged.delete(missionId);
              proven.delete(missionId);
              send(encodeEventsWake(missionId, batch.events.at(-1)!.event.seq, true));
              return;
            }
            if (batch.events.length === 0 && !l) return; // claims only events already sent
            if (!l) logged.set(missionId, (l = { events: [], claimed: 0 }));
            // A task run again after its first run was lost logs the same seqs anew: the new run's events replace them.
            for (const e of batch.events) {
              while ((l.events.at(-1)?.event.seq ?? 0) >= e.event.seq) l.events.pop();
              l.events.push(e);
            }
            l.claimed = Math.max(l.claimed, batch.claimed);
            if (!flushing) setImmediate(flush);
            flushing = true;
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
