import { trace } from '@opentelemetry/api';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { getMission } from '../db/missions.ts';
import type { Database } from '../db/schema.ts';
import { countReplies } from '../db/transcript.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics, MissionOutcome } from '../telemetry/metrics.ts';
import type { MissionResult } from '../contracts/mission.ts';

/**
 * Logs each mission's end at `info` (id, skill, status, turns, duration) once its final record is written: after
 * `completeMission` or `failMission` succeeds; counts missions started (after `prepareMission`) and ended, by skill.
 * An interceptor, so the workflow and the activities stay as they are; not awaited, so the activity's answer does not
 * wait on the read it makes.
 */
export function createMissionEndLogInterceptor(deps: {
  db: Kysely<Database>;
  logger: Logger;
  metrics: Metrics;
}): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        const type = ctx.info.activityType;
        if (type === 'prepareMission') {
          const { missionId } = input.args[0] as { missionId: string };
          void getMission(deps.db, missionId)
            .then((row) => deps.metrics.missionStarted(row.skill_name))
            .catch(() => undefined);
        }
        if (type === 'completeMission' || type === 'failMission') {
          const arg = input.args[0] as { missionId: string; result?: MissionResult };
          void logMissionEnd(deps, arg.missionId, arg.result).catch((err: unknown) =>
            deps.logger.warn('could not log the end of a mission', { missionId: arg.missionId, err }),
          );
        }
        return out;
      },
    },
  });
}

async function logMissionEnd(
  deps: { db: Kysely<Database>; logger: Logger; metrics: Metrics },
  missionId: string,
  result: MissionResult | undefined,
): Promise<void> {
  const row = await getMission(deps.db, missionId);
  // A mission that did not complete has no metrics: its turns are the model replies it received.
  const turns = result?.metrics.turns ?? (await countReplies(deps.db, missionId));
  if (row.status === 'completed' || row.status === 'failed' || row.status === 'cancelled') {
    deps.metrics.missionEnded(row.skill_name, row.status as MissionOutcome);
  }
  const end = row.finished_at ? new Date(row.finished_at).getTime() : Date.now();
  // With tracing on, the activity's span is active here: its trace is the mission's.
  const traceId = trace.getActiveSpan()?.spanContext().traceId;
  deps.logger.info('mission ended', {
    missionId,
    skill: row.skill_name,
    skillVersion: row.skill_version,
    status: row.status,
    turns,
    durationMs: end - new Date(row.created_at).getTime(),
    ...(row.error ? { phase: (row.error as { phase?: string }).phase } : {}),
    ...(traceId ? { traceId } : {}),
  });
}
