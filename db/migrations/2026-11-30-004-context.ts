import { sql, type Kysely } from 'kysely';

// Session context (profiles, memories), integrations, the activity feed, and mission budgets.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('profiles')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('company', 'text')
    .addColumn('role', 'text')
    .addColumn('brand_voice', 'text')
    .addColumn('preferences', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('profiles_pk', ['tenant_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('memories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('workspace_code', 'text')
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('mission_id', 'text')
    // Set by writers that may be retried (a tool call, mission completion): the second write is dropped.
    .addColumn('source_key', 'text', (c) => c.unique())
    .addColumn('embedding', sql`double precision[]`)
    .addColumn('search', sql`tsvector`, (c) => c.generatedAlwaysAs(sql`to_tsvector('english', content)`).stored())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('memories_owner').on('memories').columns(['tenant_id', 'user_id', 'seq']).execute();
  await db.schema.createIndex('memories_search').on('memories').using('gin').column('search').execute();
  await sql`create index memories_trgm on memories using gin (content gin_trgm_ops)`.execute(db);

  await db.schema
    .createTable('integrations')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('integrations_pk', ['tenant_id', 'user_id', 'provider'])
    .execute();

  await db.schema
    .createTable('activity')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    // `<mission>/tool/<toolUseId>/start|end` or `<mission>/end`: a retried activity writes no second row.
    .addColumn('event_key', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('tool', 'text')
    .addColumn('tool_use_id', 'text')
    .addColumn('outcome', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('error', 'text')
    .addColumn('details', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('activity_owner').on('activity').columns(['tenant_id', 'user_id', 'id']).execute();

  await db.schema.alterTable('missions').addColumn('max_tokens', 'integer').addColumn('max_cost_usd', 'double precision').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('max_tokens').dropColumn('max_cost_usd').execute();
  for (const table of ['activity', 'integrations', 'memories', 'profiles']) await db.schema.dropTable(table).execute();
}
