import type { Kysely } from 'kysely';

// The events a mission's workflow emits as it closes (an error, then the terminal status), stored by the activity that
// records its end, before the workflow emits them: the API ends a closed mission's stream from this row instead of
// asking a worker to replay the run. Null on missions recorded before, and while a mission runs.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').addColumn('final_events', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('final_events').execute();
}
