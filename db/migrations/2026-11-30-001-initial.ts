import { sql, type Kysely } from 'kysely';

// Migrations are self-contained: they use Kysely<any> and never import the app's table types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('capabilities', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('skills')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('active_version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('skills_owner_name', ['tenant_id', 'owner_id', 'name'])
    .execute();

  await db.schema
    .createTable('skill_versions')
    .addColumn('skill_id', 'text', (c) => c.notNull().references('skills.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('skill_md', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('frontmatter', 'jsonb', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('skill_versions_pk', ['skill_id', 'version'])
    .execute();

  await db.schema
    .createTable('missions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('skill_id', 'text', (c) => c.notNull().references('skills.id'))
    .addColumn('skill_name', 'text', (c) => c.notNull())
    .addColumn('skill_version', 'integer', (c) => c.notNull())
    .addColumn('objective', 'text', (c) => c.notNull())
    .addColumn('workspace_code', 'text', (c) => c.notNull())
    .addColumn('conversation_context', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('max_turns', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('catalog', 'jsonb')
    .addColumn('system_prompt', 'text')
    .addColumn('result', 'jsonb')
    .addColumn('error', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addUniqueConstraint('missions_idempotency', ['tenant_id', 'user_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('missions_owner_created').on('missions').columns(['tenant_id', 'user_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('mission_messages')
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('mission_messages_pk', ['mission_id', 'seq'])
    .execute();

  await db.schema
    .createTable('tool_calls')
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('tool_use_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('output', 'jsonb', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('tool_calls_pk', ['mission_id', 'tool_use_id'])
    .execute();

  await db.schema
    .createTable('model_calls')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('call_key', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull())
    .addColumn('output_tokens', 'integer', (c) => c.notNull())
    .addColumn('stop_reason', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('model_calls_key', ['mission_id', 'call_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['model_calls', 'tool_calls', 'mission_messages', 'missions', 'skill_versions', 'skills', 'api_keys']) {
    await db.schema.dropTable(table).execute();
  }
}
