import type { InjectedSinks } from '@temporalio/worker';
import { CHANNELS, type Notifications } from '../notify/notifications.ts';
import type { MissionSinks } from '../workflows/definitions.ts';

const PREFIX = 'mission-';

/**
 * The workflow's `progress.changed()` as a NOTIFY on the events channel, at most one per mission per turn of the
 * event loop: a workflow task that emits three events wakes the relay once, and the missions of one turn are woken in
 * one statement (one round trip however many tasks completed together). Sent after the task's completion is on its
 * way (sinks run just before it), and never awaited, so it never delays a workflow task.
 */
export function createProgressSinks(notifications: Notifications): InjectedSinks<MissionSinks> {
  const pending = new Set<string>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const missionIds = [...pending];
    pending.clear();
    void notifications.notify(CHANNELS.events, missionIds);
  };
  return {
    progress: {
      changed: {
        fn(info) {
          if (!info.workflowId.startsWith(PREFIX)) return;
          pending.add(info.workflowId.slice(PREFIX.length));
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
