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
};

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
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const ms = at.get(Number(e.eventId))! - at.get(Number(done.startedEventId))!;
    activityMs += ms;
    (byType[typeOf.get(Number(done.scheduledEventId)) ?? '?'] ??= []).push(ms);
  }
  return { workflowMs: d.closeTime!.getTime() - d.startTime.getTime(), activityMs, byType, historyLength: d.historyLength };
}
