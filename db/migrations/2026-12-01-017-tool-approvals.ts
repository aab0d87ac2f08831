import { sql, type Kysely } from 'kysely';

// One row per tool call that needed a person's approval: written by the workflow when it asks (`pending`) and again
// when the wait ends (`approved`, `denied`, `timed_out`, `cancelled`). `GET /approvals` lists the pending ones of an
// owner from here, and the rows stay as the record of who was asked what, and what was decided.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tool_approvals')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id').onDelete('cascade'))
    .addColumn('turn', 'integer', (c) => c.notNull())
    .addColumn('tool_use_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('input', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('edited_input', 'jsonb')
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz')
    .addUniqueConstraint('tool_approvals_call', ['mission_id', 'turn', 'tool_use_id'])
    .execute();
  await sql`create index tool_approvals_pending on tool_approvals (tenant_id, user_id, seq) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_approvals').execute();
}
