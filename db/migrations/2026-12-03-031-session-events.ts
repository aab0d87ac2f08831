import type { Kysely } from 'kysely';

// A session continues as new between exchanges (workflows/session-chain.ts): the run that ends stores its events here
// first, so a stream resumed from before the boundary reads them (the next run's log starts after them). One row per
// event, keyed by seq: a retried store writes nothing twice.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mission_events')
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('event', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('mission_events_pk', ['mission_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mission_events').execute();
}
