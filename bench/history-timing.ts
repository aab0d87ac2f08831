import type { WorkflowHandle } from '@temporalio/client';

/** Server-clock figures of one closed workflow run, read from its description and history. */
export type RunTiming = {
  /** Start → close. */
  workflowMs: number;
  /** Sum over its activities of started → completed. */
  activityMs: number;
  /** Started → completed of each activity call, by activity type. */
  byType: Record<string, number[]>;
  historyLength: number;
  /**
   * Where the run's time went, summed over its tasks: workflow tasks waiting for a worker (scheduled → started) and
   * being processed (started → completed); activities waiting (scheduled → started) and running.
   */
  phases: { workflowTaskWaitMs: number; workflowTaskMs: number; activityWaitMs: number; activityMs: number };
  /** What Temporal counts as actions (what Temporal Cloud bills), by kind, from the history. */
  actions: Record<string, number>;
  /** Workflow tasks completed: not actions, but each one a round trip of the worker. */
  workflowTasks: number;
};

/**
 * Billable actions by the history event that records them: a start, each activity attempt (an activity's last Started
 * event carries its attempt count), a timer, a signal, an accepted update, a child start, a search-attribute or memo
 * change. Heartbeats are not in the history: a beat is an action only when the server records it, and the zero-latency
 * bench's calls end before their first beat (2 s; none at an activity's start, `activities/heartbeat.ts`).
 */
function countActions(events: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events'] & object): Record<string, number> {
  const n: Record<string, number> = {};
  const add = (k: string, by = 1) => (n[k] = (n[k] ?? 0) + by);
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) add('start');
    else if (e.activityTaskStartedEventAttributes) add('activity', e.activityTaskStartedEventAttributes.attempt ?? 1);
    else if (e.timerStartedEventAttributes) add('timer');
    else if (e.workflowExecutionSignaledEventAttributes || e.signalExternalWorkflowExecutionInitiatedEventAttributes) add('signal');
    else if (e.workflowExecutionUpdateAcceptedEventAttributes) add('update');
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) add('child');
    else if (e.upsertWorkflowSearchAttributesEventAttributes || e.workflowPropertiesModifiedEventAttributes) add('attributes');
    else if (e.markerRecordedEventAttributes) add('marker');
  }
  return n;
}

export async function runTiming(handle: Pick<WorkflowHandle, 'describe' | 'fetchHistory'>): Promise<RunTiming> {
  const d = await handle.describe();
  const events = (await handle.fetchHistory()).events ?? [];
  const at = new Map<number, number>();
  const typeOf = new Map<number, string>();
  for (const e of events) {
    const id = Number(e.eventId);
    at.set(id, Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6);
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) typeOf.set(id, type);
  }
  let activityMs = 0;
  const byType: Record<string, number[]> = {};
  const phases = { workflowTaskWaitMs: 0, workflowTaskMs: 0, activityWaitMs: 0, activityMs: 0 };
  const span = (from: unknown, to: unknown) => at.get(Number(to))! - at.get(Number(from))!;
  for (const e of events) {
    const wftStarted = e.workflowTaskStartedEventAttributes;
    if (wftStarted) phases.workflowTaskWaitMs += span(wftStarted.scheduledEventId, e.eventId);
    const wftDone = e.workflowTaskCompletedEventAttributes;
    if (wftDone) phases.workflowTaskMs += span(wftDone.startedEventId, e.eventId);
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const ms = span(done.startedEventId, e.eventId);
    activityMs += ms;
    phases.activityMs += ms;
    phases.activityWaitMs += span(done.scheduledEventId, done.startedEventId);
    (byType[typeOf.get(Number(done.scheduledEventId)) ?? '?'] ??= []).push(ms);
  }
  return {
    workflowMs: d.closeTime!.getTime() - d.startTime.getTime(),
    activityMs,
    byType,
    historyLength: d.historyLength,
    phases,
    actions: countActions(events),
    workflowTasks: events.filter((e) => e.workflowTaskCompletedEventAttributes).length,
  };
}
