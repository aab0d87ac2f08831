import { DomainError, RateLimitedError, UnavailableError } from '../contracts/errors.ts';
import { scheduleWorkflowId, type ScheduleActivities, type ScheduleRunResult } from '../contracts/schedules.ts';
import { findSchedule, findScheduleRun, recordScheduleRun } from '../db/schedules.ts';
import type { ScheduleRunRow } from '../db/schema.ts';
import { awaitMissionEnd } from '../missions/await-mission-end.ts';
import { startMission, type MissionDeps } from '../missions/start-mission.ts';

const HEARTBEAT_MS = 10_000;

/** The activities of a schedule's run workflow (workflows/schedule-run.ts), on the missions task queue. */
export function createScheduleActivities(deps: MissionDeps): ScheduleActivities {
  return {
    async startScheduledMission({ scheduleId, runKey }) {
      const recorded = await findScheduleRun(deps.db, runKey);
      if (recorded) return result(recorded);
      const schedule = await findSchedule(deps.db, scheduleId);
      // Deleted after Temporal took the action: there is no owner to start as, and no row to record the run on.
      if (!schedule) return { outcome: 'failed', reason: 'the schedule was deleted' };
      const record = async (run: Pick<ScheduleRunRow, 'outcome' | 'mission_id' | 'reason'>) =>
        result(
          await recordScheduleRun(deps.db, {
            schedule_id: scheduleId,
            run_key: runKey,
            scheduled_at: scheduledAt(scheduleId, runKey),
            ...run,
          }),
        );
      try {
        const { row } = await startMission(
          deps,
          { tenantId: schedule.tenant_id, userId: schedule.user_id },
          {
            skill: schedule.skill,
            objective: schedule.objective,
            workspaceCode: schedule.workspace_code,
            ...schedule.limits,
            // A retried attempt, or a run whose row was lost, finds the mission its first attempt started.
            idempotencyKey: runKey,
            scheduleId,
          },
        );
        return await record({ outcome: 'started', mission_id: row.id, reason: null });
      } catch (err) {
        // Over the owner's start rate: the run is refused and said so, never retried into a later minute.
        if (err instanceof RateLimitedError) return await record({ outcome: 'refused', mission_id: null, reason: err.message });
        // Temporal unavailable: the mission row waits `starting`; the next attempt completes its start by the run key.
        if (err instanceof UnavailableError || !(err instanceof DomainError)) throw err;
        // The skill is gone or inactive, the model unconfigured: nothing a retry would change.
        return await record({ outcome: 'failed', mission_id: null, reason: err.message });
      }
    },

    async awaitMissionEnd({ missionId }) {
      await awaitMissionEnd(deps.temporal, missionId, HEARTBEAT_MS);
    },
  };
}

const result = (row: ScheduleRunRow): ScheduleRunResult => ({
  outcome: row.outcome,
  ...(row.mission_id ? { missionId: row.mission_id } : {}),
  ...(row.reason ? { reason: row.reason } : {}),
});

/** The time Temporal scheduled the run for: the suffix it appends to the schedule's workflow id (now, if unreadable). */
function scheduledAt(scheduleId: string, runKey: string): Date {
  const at = new Date(runKey.slice(scheduleWorkflowId(scheduleId).length + 1));
  return Number.isNaN(at.getTime()) ? new Date() : at;
}
