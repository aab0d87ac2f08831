import { sql, type Kysely } from 'kysely';

// The tools an app's MCP server listed when a worker last started (or why it could not list them): the API process
// reads them for the app catalogue and authoring checks instead of starting every server itself.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_listings')
    .addColumn('app_id', 'text', (c) => c.primaryKey())
    .addColumn('tools', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('listed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mcp_listings').execute();
}
