import { sql, type Kysely } from 'kysely';

// Fair limits read two things on every start: the missions that hold or wait for a slot (a partial index: finished
// missions, the bulk of the table, are not in it) and a user's starts in the last minute.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index missions_active on missions (tenant_id, user_id, created_at) where status in ('queued', 'starting', 'running')`.execute(
    db,
  );
  await sql`create index missions_starts on missions (tenant_id, user_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index missions_starts`.execute(db);
  await sql`drop index missions_active`.execute(db);
}
