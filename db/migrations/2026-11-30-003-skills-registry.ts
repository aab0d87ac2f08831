import { sql, type Kysely } from 'kysely';

// The skills registry: source, review status and import audit on skills; content-addressed bundles; immutable
// versions (enforced by a trigger); one discovery chunk per identity, trigger and not_for ask of each version.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('skills')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('authored'))
    .addColumn('import_audit', 'jsonb')
    .execute();
  await sql`alter table skills add constraint skills_source check (source in ('authored', 'imported', 'promoted'))`.execute(db);
  await sql`alter table skills add constraint skills_status check (status in ('draft', 'active', 'quarantined'))`.execute(db);

  await db.schema
    .createTable('skill_bundles')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .alterTable('skill_versions')
    .addColumn('bundle_sha256', 'text', (c) => c.references('skill_bundles.sha256'))
    .addColumn('files', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  // Versions are append-only: nothing may rewrite or remove one (dropping the table, in a down migration, still works).
  await sql`
    create function skill_versions_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'skill versions are immutable (% refused)', tg_op;
    end $$`.execute(db);
  await sql`
    create trigger skill_versions_append_only before update or delete on skill_versions
    for each row execute function skill_versions_immutable()`.execute(db);

  await db.schema
    .createTable('skill_chunks')
    .addColumn('skill_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('identity', 'trigger', 'not_for')`))
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('search', sql`tsvector`, (c) => c.generatedAlwaysAs(sql`to_tsvector('english', text)`).stored())
    .addColumn('embedding', sql`double precision[]`)
    .addPrimaryKeyConstraint('skill_chunks_pk', ['skill_id', 'version', 'ordinal'])
    .addForeignKeyConstraint('skill_chunks_version', ['skill_id', 'version'], 'skill_versions', ['skill_id', 'version'])
    .execute();
  await db.schema.createIndex('skill_chunks_search').on('skill_chunks').using('gin').column('search').execute();
  await sql`create index skill_chunks_trgm on skill_chunks using gin (text gin_trgm_ops)`.execute(db);

  // Skills stored before this migration get their identity chunk, so discovery finds them too.
  await sql`
    insert into skill_chunks (skill_id, version, ordinal, kind, text)
    select id, active_version, 0, 'identity', replace(name, '-', ' ') || ': ' || description from skills`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('skill_chunks').execute();
  await sql`drop trigger skill_versions_append_only on skill_versions`.execute(db);
  await sql`drop function skill_versions_immutable()`.execute(db);
  await db.schema.alterTable('skill_versions').dropColumn('bundle_sha256').dropColumn('files').dropColumn('warnings').execute();
  await db.schema.dropTable('skill_bundles').execute();
  await sql`alter table skills drop constraint skills_status`.execute(db);
  await db.schema.alterTable('skills').dropColumn('source').dropColumn('import_audit').execute();
}
