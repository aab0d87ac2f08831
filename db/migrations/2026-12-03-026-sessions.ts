import type { Kysely } from 'kysely';

// Sessions: a mission started with `session: true` (or of a skill with `cadenza-session`) goes `idle` after each answer
// and continues with the next message; each exchange's result is kept in `exchanges`, oldest first (null: none yet).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('missions')
    .addColumn('session', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('exchanges', 'jsonb')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('session').dropColumn('exchanges').execute();
}
