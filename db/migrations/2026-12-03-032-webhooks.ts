import { sql, type Kysely } from 'kysely';

// Webhook endpoints of an owner and the deliveries owed to them. A delivery row is written in the same statement as
// the event it reports (a mission's end, an approval request), so an event is never recorded without its deliveries;
// its id is the Standard Webhooks `webhook-id`, stable across retries and redeliveries, so receivers can dedupe.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    // During a rotation both secrets sign, until `previous_secret_until`.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'timestamptz')
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhooks_owner').on('webhooks').columns(['tenant_id', 'user_id']).execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    // What the event is about (a mission's id, a schedule's): the worker wakes the endpoints owed its deliveries.
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    // `pending` until the receiver answers 2xx (`delivered`) or the retry window ends (`failed`).
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Where the retry window (WEBHOOK_RETRY_HOURS) starts: the event, or the latest redelivery.
    .addColumn('pending_since', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    // One delivery per endpoint per event: a retried recording writes none twice.
    .addUniqueConstraint('webhook_deliveries_event', ['webhook_id', 'event_key'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_source').on('webhook_deliveries').columns(['source_id']).execute();
  await sql`create index webhook_deliveries_pending on webhook_deliveries (webhook_id, seq) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhooks').execute();
}
