import type { Kysely } from 'kysely';

// Whether a schedule is paused, as last set through the API (create, pause, unpause) or seen by its detail: lets a
// list say so without asking Temporal once per schedule. Temporal's description stays the truth on the detail.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('schedules')
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('schedules').dropColumn('paused').execute();
}
