import { sql, type Kysely } from 'kysely';

// PROVIDER_LIMITS shared by every worker: one bucket row per limited `provider:model` (what is left of each per-minute
// allowance when it was last refilled), and one row per model call that asked for a turn: waiting (reserved_at null),
// then reserved with its estimate, then settled with the tokens the provider counted; and each request as it is sent
// (the last minute's, pacing the sends themselves).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('provider_buckets')
    .addColumn('target', 'text', (c) => c.primaryKey())
    .addColumn('requests', 'double precision', (c) => c.notNull())
    .addColumn('input_tokens', 'double precision', (c) => c.notNull())
    .addColumn('output_tokens', 'double precision', (c) => c.notNull())
    .addColumn('refilled_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('provider_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('mission_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('asked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('due_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('reserved_at', 'timestamptz')
    .addColumn('est_input_tokens', 'integer', (c) => c.notNull())
    .addColumn('est_output_tokens', 'integer', (c) => c.notNull())
    .addColumn('input_tokens', 'integer')
    .addColumn('output_tokens', 'integer')
    .addColumn('settled_at', 'timestamptz')
    .execute();
  await sql`create index provider_calls_target on provider_calls (target, reserved_at, asked_at)`.execute(db);
  await db.schema
    .createTable('provider_sends')
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index provider_sends_target on provider_sends (target, sent_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_sends').execute();
  await db.schema.dropTable('provider_calls').execute();
  await db.schema.dropTable('provider_buckets').execute();
}
