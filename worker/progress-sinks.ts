import type { InjectedSinks } from '@temporalio/worker';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import { encodeEventsWake } from '../notify/events-wake.ts';
import type { MissionSinks } from '../workflows/definitions.ts';

const PREFIX = 'mission-';

/**
 * The workflow's `progress.changed(lastSeq)` as a NOTIFY on the events channel, at most one per mission per turn of the
 * event loop, naming the last seq: a workflow task that emits three events wakes the relay once, and a relay that
 * read that far already does not ask again; the terminal event's wake-up says so (`ended`). The missions of one turn are woken in
 * one statement (one round trip however many tasks completed together). Sent after the task's completion is on its
 * way (sinks run just before it), and never awaited, so it never delays a workflow task.
 */
export function createProgressSinks(notifications: Notifications): InjectedSinks<MissionSinks> {
  const pending = new Map<string, { lastSeq: number; ended: boolean }>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const payloads = [...pending].map(([missionId, wake]) => encodeEventsWake(missionId, wake.lastSeq, wake.ended));
    pending.clear();
    void notifications.notify(CHANNELS.events, payloads);
  };
  return {
    progress: {
      changed: {
        fn(info, lastSeq, ended) {
          if (!info.workflowId.startsWith(PREFIX)) return;
          const missionId = info.workflowId.slice(PREFIX.length);
          const before = pending.get(missionId);
          pending.set(missionId, { lastSeq: Math.max(lastSeq, before?.lastSeq ?? 0), ended: ended === true || before?.ended === true });
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        },
        callDuringReplay: false,
      },
    },
  };
}

/** For workers that only replay or test the workflow: its wake-ups go nowhere. */
export const IGNORED_PROGRESS_SINKS: InjectedSinks<MissionSinks> = { progress: { changed: { fn: () => {} } } };
