import { sql, type Kysely } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, MissionRow, MissionUpdate, NewMission } from './schema.ts';
import type { MissionEvent } from '../contracts/events.ts';

/**
 * Inserts a mission unless the owner already has one with the same idempotency key;
 * returns the stored row and whether it is new.
 */
export async function insertMissionOnce(db: Kysely<Database>, mission: NewMission): Promise<{ row: MissionRow; created: boolean }> {
  const inserted = await db
    .insertInto('missions')
    // `updated_at` from the moment of the insert, not the transaction's start (`now()`): a start that waited for its
    // user's start lock must not look `starting` for that long already to the start settler (admission/start-settler.ts).
    .values({ ...mission, updated_at: sql<Date>`clock_timestamp()` })
    .onConflict((oc) => oc.constraint('missions_idempotency').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await findMissionByIdempotencyKey(
    db,
    { tenantId: mission.tenant_id, userId: mission.user_id },
    mission.idempotency_key!,
  );
  if (!existing) throw new Error('idempotency conflict without a row');
  return { row: existing, created: false };
}

/** The owner's mission started with this idempotency key, if any. */
export async function findMissionByIdempotencyKey(db: Kysely<Database>, owner: Owner, key: string): Promise<MissionRow | undefined> {
  return db.selectFrom('missions').selectAll().where(whereOwner(owner)).where('idempotency_key', '=', key).executeTakeFirst();
}

/** A mission of this owner; someone else's mission is indistinguishable from a missing one. */
export async function findOwnedMission(db: Kysely<Database>, owner: Owner, id: string): Promise<MissionRow | undefined> {
  return db.selectFrom('missions').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}

/** Whether any mission, of anyone, has this id (a thread id a caller names must not take another's). */
export async function missionIdTaken(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('missions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function getMission(db: Kysely<Database>, id: string): Promise<MissionRow> {
  return db.selectFrom('missions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The events a mission's workflow closed with, once its end is recorded (null before, and on older missions). */
export async function findFinalEvents(db: Kysely<Database>, id: string): Promise<MissionEvent[] | null> {
  const row = await db.selectFrom('missions').select('final_events').where('id', '=', id).executeTakeFirst();
  return row?.final_events ?? null;
}

/** Which of the owner's missions a list shows: all, or those with this status and/or of this skill (by name). */
export type MissionFilter = { status?: string; skillName?: string; scheduleId?: string };

/** The owner's missions, newest first, after the mission `afterId` (the last one of the previous page). */
export async function listOwnedMissions(
  db: Kysely<Database>,
  owner: Owner,
  page: { limit: number; afterId?: string },
  filter: MissionFilter = {},
): Promise<MissionRow[]> {
  let q = db.selectFrom('missions').selectAll().where(whereOwner(owner));
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.skillName !== undefined) q = q.where('skill_name', '=', filter.skillName);
  if (filter.scheduleId !== undefined) q = q.where('schedule_id', '=', filter.scheduleId);
  if (page.afterId !== undefined) {
    // Compare with the cursor row's own timestamp (microseconds in Postgres), so no row of the same instant is skipped.
    const at = sql<Date>`(select c.created_at from missions c where c.id = ${page.afterId} and c.tenant_id = ${owner.tenantId} and c.user_id = ${owner.userId})`;
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', page.afterId!)])]));
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

export async function updateMission(db: Kysely<Database>, id: string, patch: MissionUpdate): Promise<void> {
  await db
    .updateTable('missions')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** Moves a mission from one status to another, only if it is still in `from`; the updated row, or undefined. */
export async function updateMissionIfStatus(
  db: Kysely<Database>,
  id: string,
  from: string,
  patch: MissionUpdate,
): Promise<MissionRow | undefined> {
  return db
    .updateTable('missions')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** What a mission's activities keep for its life: the owner, the system prompt and the tool catalog. */
export async function getMissionFacts(db: Kysely<Database>, id: string) {
  return db
    .selectFrom('missions')
    .select(['tenant_id', 'user_id', 'system_prompt', 'catalog', 'output_schema'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}
