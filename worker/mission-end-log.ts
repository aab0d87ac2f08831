import { trace } from '@opentelemetry/api';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { afterAnswer, type RecordedEnd } from '../activities/after-answer.ts';
import type { Database } from '../db/schema.ts';
import { countReplies } from '../db/transcript.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import type { MissionResult } from '../contracts/mission.ts';

/**
 * Logs each mission's end at `info` (id, skill, status, turns, duration) once its final record is written: after
 * `completeMission` or `failMission` succeeds; counts missions started (after `prepareMission`) and ended, by skill.
 * An interceptor, so the workflow and the activities stay as they are; what it needs of the row is what the activity
 * wrote and left in its note (`activities/after-answer.ts`), so a completed mission costs it no read; a failed one's
 * turns are counted after the answer, not awaited.
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
        const { started, ended } = afterAnswer(ctx);
        if (started) deps.metrics.missionStarted(started.skillName);
        if (ended) {
          const arg = input.args[0] as { missionId: string; result?: MissionResult };
          deps.metrics.missionEnded(ended.skillName, ended.status);
          void logMissionEnd(deps, arg.missionId, ended, arg.result).catch((err: unknown) =>
            deps.logger.warn('could not log the end of a mission', { missionId: arg.missionId, err }),
          );
        }
        return out;
      },
    },
  });
}

async function logMissionEnd(
  deps: { db: Kysely<Database>; logger: Logger },
  missionId: string,
  ended: RecordedEnd,
  result: MissionResult | undefined,
): Promise<void> {
  // With tracing on, the activity's span is active here: its trace is the mission's.
  const traceId = trace.getActiveSpan()?.spanContext().traceId;
  // A mission that did not complete has no metrics: its turns are the model replies it received.
  const turns = result?.metrics.turns ?? (await countReplies(deps.db, missionId));
  deps.logger.info('mission ended', {
    missionId,
    skill: ended.skillName,
    skillVersion: ended.skillVersion,
    status: ended.status,
    turns,
    durationMs: ended.finishedAt.getTime() - ended.createdAt.getTime(),
    ...(ended.phase ? { phase: ended.phase } : {}),
    ...(traceId ? { traceId } : {}),
  });
}
