import { sql, type Kysely } from 'kysely';

// Provider keys (user- and tenant-scoped, AES-256-GCM ciphertext only), tenant app switches, and what a mission's
// catalog left out or preselected.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('provider_secrets')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('user', 'tenant')`))
    // '' for a tenant-wide key: a primary key column cannot be null.
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'bytea', (c) => c.notNull())
    .addColumn('ciphertext', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('provider_secrets_pk', ['tenant_id', 'scope', 'user_id', 'provider'])
    .addCheckConstraint('provider_secrets_scope_user', sql`(scope = 'tenant') = (user_id = '')`)
    .execute();

  await db.schema
    .createTable('tenant_apps')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('tenant_apps_pk', ['tenant_id', 'app_id'])
    .execute();

  await db.schema.alterTable('missions').addColumn('tool_selection', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('tool_selection').execute();
  await db.schema.dropTable('tenant_apps').execute();
  await db.schema.dropTable('provider_secrets').execute();
}
