import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities, ScheduleRunInput, ScheduleRunResult } from '../contracts/schedules.ts';

// The start may wait out a Temporal or database outage: retried until it answers (it is idempotent by the run key).
const { startScheduledMission } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});
// Waits as long as the mission runs (approvals may take days); the heartbeat shows a dead worker within a minute.
const { awaitMissionEnd } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/**
 * One run of a Cadenza schedule, started by its Temporal Schedule: starts the mission as the schedule's owner (through
 * admission, like `POST /missions`), then lasts as long as the mission does, so the schedule's overlap policy counts
 * a running mission as a running action. The workflow id (the schedule's, plus the scheduled time) is the run key.
 */
export async function scheduleRunWorkflow(input: ScheduleRunInput): Promise<ScheduleRunResult> {
  const run = await startScheduledMission.executeWithOptions({ summary: 'start the mission' }, [
    { scheduleId: input.scheduleId, runKey: workflowInfo().workflowId },
  ]);
  if (run.missionId) await awaitMissionEnd.executeWithOptions({ summary: 'wait for the mission to end' }, [{ missionId: run.missionId }]);
  return run;
}
