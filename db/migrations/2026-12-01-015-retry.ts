import { sql, type Kysely } from 'kysely';

// A retried mission names the one it retries (`retry_of`) and keeps where its workflow resumes (`resume`), so a start
// that failed (Temporal unavailable) is completed later with the same input. One retry per mission: the unique index
// makes the link one-to-one both ways (`retriedBy` is a lookup).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('missions')
    .addColumn('retry_of', 'text', (c) => c.references('missions.id'))
    .addColumn('resume', 'jsonb')
    .execute();
  await sql`create unique index missions_retry_of on missions (retry_of) where retry_of is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index missions_retry_of`.execute(db);
  await db.schema.alterTable('missions').dropColumn('resume').dropColumn('retry_of').execute();
}
