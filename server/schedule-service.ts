import { randomUUID } from 'node:crypto';
import { isGrpcServiceError, ScheduleNotFoundError, type Client, type ScheduleHandle } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { NotFoundError, ValidationError } from '../contracts/errors.ts';
import { SCHEDULE_RUN_WORKFLOW, scheduleWorkflowId, type ScheduleOverlap } from '../contracts/schedules.ts';
import type { Owner } from '../db/owner.ts';
import { deleteSchedule, findOwnedSchedule, insertSchedule, recentScheduleRuns, updateSchedule } from '../db/schedules.ts';
import type { Database, ScheduleRow } from '../db/schema.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import { missionLimits } from '../missions/mission-limits.ts';
import { resolveMissionSkill } from '../missions/mission-skill.ts';
import { inZone, temporalOverlap, temporalSpec, type ScheduleTiming } from '../schedules/schedule-spec.ts';
import type { CreateScheduleBody, UpdateScheduleBody } from './schedule-schemas.ts';

/** How many of a schedule's latest runs its detail shows. */
const RECENT_RUNS = 20;
/**
 * How long a schedule's describe may take. Temporal answers it with a query of the schedule's own workflow, which
 * waits behind that workflow's pending task (a pause, a run just taken): on a loaded server that outlasts the API's
 * 5 s default, and the caller would get a 503 for a schedule that is fine.
 */
const DESCRIBE_DEADLINE_MS = 20_000;

export type ScheduleDeps = {
  db: Kysely<Database>;
  temporal: Client;
  config: Pick<Config, 'temporal' | 'model' | 'budgets' | 'maxTurnsCap' | 'skills'>;
  embeddings?: EmbeddingsClient | undefined;
  vectors: VectorSearch;
};

/**
 * Records the schedule, then creates its Temporal Schedule, whose action starts `scheduleRunWorkflow` on the missions
 * task queue. The skill and limits are checked now as a mission start would (404 for a skill that is not the owner's,
 * 422 for an inactive one); each run checks them again, as its owner's at that time.
 */
export async function createSchedule(deps: ScheduleDeps, owner: Owner, body: CreateScheduleBody): Promise<ScheduleRow> {
  const found = await resolveMissionSkill(deps, owner, body);
  missionLimits(deps.config, found.version.spec, body.limits);
  const spec = { ...timingOf(body), timezone: body.timezone ?? 'UTC' };
  const row = await insertSchedule(deps.db, {
    id: randomUUID(),
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    skill: body.skill,
    objective: body.objective,
    workspace_code: body.workspaceCode,
    spec: JSON.stringify(spec),
    overlap: body.overlap,
    catchup_window: body.catchupWindow,
    limits: JSON.stringify(body.limits),
    paused: body.paused === true,
  });
  try {
    await refusedAs400(spec, () =>
      deps.temporal.schedule.create({
        scheduleId: scheduleWorkflowId(row.id),
        spec: temporalSpec(spec),
        action: {
          type: 'startWorkflow',
          workflowType: SCHEDULE_RUN_WORKFLOW,
          workflowId: scheduleWorkflowId(row.id),
          taskQueue: deps.config.temporal.taskQueue,
          args: [{ scheduleId: row.id }],
          staticSummary: `${body.skill} · ${truncate(body.objective, 120)}`,
        },
        policies: { overlap: temporalOverlap(body.overlap), catchupWindow: body.catchupWindow },
        state: { paused: body.paused },
        memo: { tenantId: owner.tenantId, userId: owner.userId, skill: body.skill },
      }),
    );
  } catch (err) {
    await deleteSchedule(deps.db, row.id);
    throw err;
  }
  return row;
}

/** Changes what runs start (objective, limits: the row) and when (timing, overlap, catch-up: the Temporal Schedule too). */
export async function changeSchedule(deps: ScheduleDeps, owner: Owner, id: string, body: UpdateScheduleBody): Promise<ScheduleRow> {
  const row = await ownedSchedule(deps, owner, id);
  // New limits are checked as a run would check them (422 for a cost budget on an unpriced model), not at the next run.
  if (body.limits) missionLimits(deps.config, (await resolveMissionSkill(deps, owner, row)).version.spec, body.limits);
  const spec = body.cron !== undefined || body.every !== undefined ? { ...timingOf(body), timezone: body.timezone ?? 'UTC' } : row.spec;
  const overlap = body.overlap ?? (row.overlap as ScheduleOverlap);
  const catchupWindow = body.catchupWindow ?? row.catchup_window;
  if (body.cron !== undefined || body.every !== undefined || body.overlap !== undefined || body.catchupWindow !== undefined) {
    await refusedAs400(spec, () =>
      inTemporal(
        handle(deps, row.id).update((prev) => ({
          ...prev,
          spec: temporalSpec(spec),
          policies: { ...prev.policies, overlap: temporalOverlap(overlap), catchupWindow },
        })),
      ),
    );
  }
  return updateSchedule(deps.db, row.id, {
    spec: JSON.stringify(spec),
    overlap,
    catchup_window: catchupWindow,
    ...(body.objective !== undefined ? { objective: body.objective } : {}),
    ...(body.limits !== undefined ? { limits: JSON.stringify(body.limits) } : {}),
  });
}

/** The schedule as stored, with Temporal's state (paused, next run times in its zone, actions) and its latest runs. */
export async function describeSchedule(deps: ScheduleDeps, owner: Owner, id: string) {
  const row = await ownedSchedule(deps, owner, id);
  const described = await inTemporal(deps.temporal.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () => handle(deps, row.id).describe()));
  const timezone = row.spec.timezone ?? 'UTC';
  // Paused or resumed by other means (the Web UI, the CLI): the row catches up, so the list says so too.
  const paused = described.state.paused;
  const current = paused === row.paused ? row : await updateSchedule(deps.db, row.id, { paused });
  return {
    row: current,
    paused,
    nextRunTimes: described.info.nextActionTimes.map((at) => inZone(at, timezone)),
    actions: {
      taken: described.info.numActionsTaken,
      skippedOverlap: described.info.numActionsSkippedOverlap,
      running: described.info.runningActions.length,
    },
    runs: await recentScheduleRuns(deps.db, row.id, RECENT_RUNS),
  };
}

/** Pause, unpause or trigger (a run now, whatever the overlap policy) the owner's schedule. */
export async function actOnSchedule(deps: ScheduleDeps, owner: Owner, id: string, act: 'pause' | 'unpause' | 'trigger'): Promise<void> {
  const h = handle(deps, (await ownedSchedule(deps, owner, id)).id);
  await inTemporal(act === 'trigger' ? h.trigger() : h[act](`${act}d through the API`));
  if (act !== 'trigger') await updateSchedule(deps.db, id, { paused: act === 'pause' });
}

/** Deletes the Temporal Schedule (one already gone is fine), then the row and its runs; started missions go on. */
export async function removeSchedule(deps: ScheduleDeps, owner: Owner, id: string): Promise<void> {
  const row = await ownedSchedule(deps, owner, id);
  await handle(deps, row.id)
    .delete()
    .catch((err: unknown) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
  await deleteSchedule(deps.db, row.id);
}

async function ownedSchedule(deps: ScheduleDeps, owner: Owner, id: string): Promise<ScheduleRow> {
  const row = await findOwnedSchedule(deps.db, owner, id);
  if (!row) throw new NotFoundError('schedule not found');
  return row;
}

const handle = (deps: ScheduleDeps, id: string): ScheduleHandle => deps.temporal.schedule.getHandle(scheduleWorkflowId(id));

/** A schedule whose Temporal Schedule was deleted by other means (the Web UI, the CLI) is a 404 naming that. */
async function inTemporal<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError)
      throw new NotFoundError('the schedule is no longer in Temporal: delete it and create it again');
    throw err;
  }
}

const timingOf = (b: ScheduleTiming) => (b.cron !== undefined ? { cron: b.cron } : { every: b.every! });

/**
 * Temporal's own refusal of a spec (the SDK's TypeError, or INVALID_ARGUMENT) as a 400 naming the field: whatever the
 * API's checks let through, a caller's mistake is never a 500.
 */
async function refusedAs400<T>(spec: ScheduleTiming, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const grpc = [err, (err as { cause?: unknown }).cause].find(isGrpcServiceError);
    if (!(err instanceof TypeError) && grpc?.code !== 3) throw err;
    const message = err instanceof Error ? err.message : String(err);
    const field = /zone|location/i.test(message) ? 'timezone' : spec.cron !== undefined ? 'cron' : 'every';
    throw new ValidationError(`Temporal refused the schedule: ${message}`, { fields: [{ field, message }] });
  }
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
