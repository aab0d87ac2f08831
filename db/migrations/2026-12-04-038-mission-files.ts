import { sql, type Kysely } from 'kysely';

// Files a mission's tools and scripts return (issue 35 part 4). The bytes are stored once per content, like skill
// bundles: `file_blobs` keyed by sha256. `mission_files` names them per mission, one row per (call, name), so a call
// that runs again after a worker's death writes the same row, never a second one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('file_blobs')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('mission_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('mission_id', 'text', (c) => c.notNull().references('missions.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('tool_use_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('media_type', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull().references('file_blobs.sha256'))
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('mission_files_call_name', ['mission_id', 'tool_use_id', 'name'])
    .execute();
  await db.schema.createIndex('mission_files_owner_idx').on('mission_files').columns(['tenant_id', 'user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mission_files').execute();
  await db.schema.dropTable('file_blobs').execute();
}
