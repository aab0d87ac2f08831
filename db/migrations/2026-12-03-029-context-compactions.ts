import { sql, type Kysely } from 'kysely';

// Context compaction: a summary the model wrote of a mission's transcript before position `upto_seq` (an assistant
// reply), stored once per cut so every retry and replay reads the same one. The latest cut is the one in use.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('context_compactions')
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('upto_seq', 'integer', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('folded_messages', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('context_compactions_pk', ['mission_id', 'upto_seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('context_compactions').execute();
}
