import { sql, type Kysely, type Transaction } from 'kysely';
import type { Owner } from './owner.ts';
import type { Database } from './schema.ts';

/** Statuses that hold a slot: a mission admitted (starting) or running. */
const HOLDING = ['starting', 'running'];

/** Serialises admission passes across every API and worker process (a transaction-scoped advisory lock). */
export async function lockAdmission(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('cadenza-admission'))`.execute(trx);
}

/**
 * How long a start waits for its user's start lock before Postgres refuses it (SQLSTATE 55P03, `isDatabaseBusy`): a
 * start queued behind many others of the same user holds a pooled connection while it waits, so an unbounded wait
 * starves every other request of the process; bounded, the caller is told to retry (503) and the connection goes back.
 */
export const START_LOCK_WAIT_MS = 5_000;

/** Serialises one user's starts, so a rate check and the insert it allows are one step (a wait of at most START_LOCK_WAIT_MS). */
export async function lockUserStarts(trx: Transaction<Database>, owner: Owner): Promise<void> {
  await sql`select set_config('lock_timeout', ${String(START_LOCK_WAIT_MS)}, true)`.execute(trx);
  await sql`select pg_advisory_xact_lock(hashtext(${`cadenza-starts:${owner.tenantId}/${owner.userId}`}))`.execute(trx);
}

/** The user's starts in the last `windowS` seconds (database clock; sub-missions are part of their root's start), and when the oldest of them leaves the window. */
export async function recentStarts(db: Kysely<Database>, owner: Owner, windowS: number): Promise<{ count: number; freeInMs: number }> {
  const row = await sql<{ count: string; free_in_ms: number | null }>`
    select count(*) as count,
           extract(epoch from (min(created_at) + make_interval(secs => ${windowS}) - now())) * 1000 as free_in_ms
    from missions
    where tenant_id = ${owner.tenantId} and user_id = ${owner.userId} and parent_id is null
      and created_at > now() - make_interval(secs => ${windowS})`.execute(db);
  const r = row.rows[0]!;
  return { count: Number(r.count), freeInMs: Math.max(0, Number(r.free_in_ms ?? 0)) };
}

/** Slots held per user (tenant and user) right now. */
export async function heldSlots(db: Kysely<Database>): Promise<Array<{ tenantId: string; userId: string; count: number }>> {
  const rows = await db
    .selectFrom('missions')
    .select(['tenant_id', 'user_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('status', 'in', HOLDING)
    // A sub-mission runs on its root's slot: admission counts a tree once.
    .where('parent_id', 'is', null)
    .groupBy(['tenant_id', 'user_id'])
    .execute();
  return rows.map((r) => ({ tenantId: r.tenant_id, userId: r.user_id, count: Number(r.n) }));
}

/** The first `perUser` queued missions of every user, oldest first: all a pass could admit, however long a backlog is. */
export async function queuedHeads(db: Kysely<Database>, perUser: number): Promise<Array<{ id: string; tenantId: string; userId: string }>> {
  const rows = await sql<{ id: string; tenant_id: string; user_id: string }>`
    select id, tenant_id, user_id from (
      select id, tenant_id, user_id, created_at,
             row_number() over (partition by tenant_id, user_id order by created_at, id) as rn
      from missions where status = 'queued'
    ) q where rn <= ${perUser} order by created_at, id`.execute(db);
  return rows.rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, userId: r.user_id }));
}

/** Queued → starting for these missions (a slot is theirs); the ids that moved. */
export async function markAdmitted(db: Kysely<Database>, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('missions')
    .set({ status: 'starting', updated_at: new Date() })
    .where('id', 'in', ids)
    .where('status', '=', 'queued')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Missions `starting` since at least `olderThanS` seconds (database clock), oldest first: the start settler's work. */
export async function staleStarting(db: Kysely<Database>, olderThanS: number, limit: number) {
  return db
    .selectFrom('missions')
    .selectAll()
    .where('status', '=', 'starting')
    .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanS})`)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}
