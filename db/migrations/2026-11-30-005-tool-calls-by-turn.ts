import { sql, type Kysely } from 'kysely';

// A tool call is keyed by its turn too: some OpenAI-compatible servers reuse tool-call ids (call_0) every turn.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tool_calls')
    .addColumn('turn', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`alter table tool_calls drop constraint tool_calls_pk`.execute(db);
  await sql`alter table tool_calls add constraint tool_calls_pk primary key (mission_id, turn, tool_use_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tool_calls drop constraint tool_calls_pk`.execute(db);
  await sql`alter table tool_calls add constraint tool_calls_pk primary key (mission_id, tool_use_id)`.execute(db);
  await db.schema.alterTable('tool_calls').dropColumn('turn').execute();
}
