import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * A Cadenza schedule's contract: its Temporal Schedule's id, the small workflow each scheduled run starts, and the
 * activities that workflow calls. Temporal's Schedule owns the timing (spec, overlap, catch-up, pause); the workflow
 * starts the mission through the same path as `POST /missions`, then waits for its end so the overlap policy sees
 * the mission, not just the start.
 */

export const SCHEDULE_RUN_WORKFLOW = 'scheduleRunWorkflow';
/** The Temporal Schedule's id, also its action's workflow id; Temporal appends each run's scheduled time. */
export const scheduleWorkflowId = (scheduleId: string): string => `schedule-${scheduleId}`;

/** On a mission a schedule started: the schedule's id. */
export const ScheduleSearchAttribute = defineSearchAttributeKey('CadenzaSchedule', SearchAttributeType.KEYWORD);

/** The overlap policies a schedule takes, as the API spells them. */
export const SCHEDULE_OVERLAPS = ['skip', 'buffer_one', 'allow_all'] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/** What a run became: a mission started (running or queued), refused by admission, or failed before a start. */
export type ScheduleRunOutcome = 'started' | 'refused' | 'failed';

export type ScheduleRunInput = { scheduleId: string };

/** The start activity's answer: the run as recorded. */
export type ScheduleRunResult = { outcome: ScheduleRunOutcome; missionId?: string; reason?: string };

export interface ScheduleActivities {
  /**
   * Starts the run's mission as the schedule's owner, idempotently: `runKey` (the run's workflow id) is the mission's
   * idempotency key and the run row's key.
   */
  startScheduledMission(input: { scheduleId: string; runKey: string }): Promise<ScheduleRunResult>;
  /** Returns once the mission's workflow has closed, however it ended. */
  awaitMissionEnd(input: { missionId: string }): Promise<void>;
}
