import { sql, type Kysely } from 'kysely';

// Every tool call's result as an embed (its id is the invocation's, unique across missions; (mission, turn, tool use)
// makes the writes of a retried activity land on the same row), the canvas specs its result carried, and the embeds a
// mission was started with (`missions.embed_refs`).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('embeds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('turn', 'integer', (c) => c.notNull())
    .addColumn('tool_use_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('previews', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('follow_ups', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('instructions', 'text')
    .addColumn('canvas_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addUniqueConstraint('embeds_invocation', ['mission_id', 'turn', 'tool_use_id'])
    .execute();
  await db.schema.createIndex('embeds_owner').on('embeds').columns(['tenant_id', 'user_id', 'mission_id']).execute();
  await db.schema
    .createTable('canvases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('embed_id', 'text', (c) => c.notNull().references('embeds.id').onDelete('cascade'))
    .addColumn('mission_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('spec', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('canvases_position', ['embed_id', 'position'])
    .execute();
  await db.schema.alterTable('missions').addColumn('embed_refs', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('embed_refs').execute();
  await db.schema.dropTable('canvases').execute();
  await db.schema.dropTable('embeds').execute();
}
