import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, ScheduleRow, ScheduleRunRow, SchedulesTable } from './schema.ts';
import { webhookEventInsert } from './webhook-events.ts';

export async function insertSchedule(db: Kysely<Database>, row: Insertable<SchedulesTable>): Promise<ScheduleRow> {
  return db.insertInto('schedules').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A schedule of this owner; someone else's is indistinguishable from a missing one. */
export async function findOwnedSchedule(db: Kysely<Database>, owner: Owner, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}

/** A schedule by id whoever owns it: for its start workflow, which runs as the owner the row names. */
export async function findSchedule(db: Kysely<Database>, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The owner's schedules, newest first, after the cursor row. */
export async function listOwnedSchedules(
  db: Kysely<Database>,
  owner: Owner,
  page: { limit: number; afterId?: string | undefined },
): Promise<ScheduleRow[]> {
  let q = db.selectFrom('schedules').selectAll().where(whereOwner(owner));
  if (page.afterId !== undefined) {
    const afterId = page.afterId;
    const at = sql<Date>`(select c.created_at from schedules c where c.id = ${afterId} and c.tenant_id = ${owner.tenantId} and c.user_id = ${owner.userId})`;
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', afterId)])]));
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

export async function updateSchedule(db: Kysely<Database>, id: string, patch: Updateable<SchedulesTable>): Promise<ScheduleRow> {
  return db
    .updateTable('schedules')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the schedule and its runs; its missions keep their schedule id. */
export async function deleteSchedule(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('schedules').where('id', '=', id).execute();
}

/**
 * Records a run once: a retried activity finds the row its first attempt wrote. A run that started no mission (refused
 * or failed) enqueues its `schedule.run_failed` webhook deliveries in the same statement.
 */
export async function recordScheduleRun(db: Kysely<Database>, run: Omit<ScheduleRunRow, 'at'>): Promise<ScheduleRunRow> {
  const failed =
    run.outcome === 'started'
      ? []
      : [
          {
            type: 'schedule.run_failed',
            eventKey: `${run.run_key}/failed`,
            data: {
              scheduleId: run.schedule_id,
              runKey: run.run_key,
              status: run.outcome,
              reason: run.reason,
              links: { schedule: `/api/v1/schedules/${run.schedule_id}` },
            },
          },
        ];
  const inserted = await db
    .with('deliveries', (qc) => webhookEventInsert(qc, { table: 'schedules', id: run.schedule_id }, failed))
    .insertInto('schedule_runs')
    .values(run)
    .onConflict((oc) => oc.column('run_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted ?? (await findScheduleRun(db, run.run_key))!;
}

export async function findScheduleRun(db: Kysely<Database>, runKey: string): Promise<ScheduleRunRow | undefined> {
  return db.selectFrom('schedule_runs').selectAll().where('run_key', '=', runKey).executeTakeFirst();
}

/** A schedule's latest runs, newest first. */
export async function recentScheduleRuns(db: Kysely<Database>, scheduleId: string, limit: number): Promise<ScheduleRunRow[]> {
  return db
    .selectFrom('schedule_runs')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .orderBy('at', 'desc')
    .orderBy('run_key', 'desc')
    .limit(limit)
    .execute();
}
