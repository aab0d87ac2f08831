import { sql, type Kysely } from 'kysely';

// MCP's `notifications/tools/list_changed` (issue 34): a skill that comes, goes or changes what a listing shows
// (name, description, status, version) tells every API process at its commit, whichever path wrote it (authoring,
// imports, review, retirement, the script factory), on the `cadenza_skills` channel, naming its owner.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function skills_changed() returns trigger language plpgsql as $$
    declare row record := coalesce(new, old);
    begin
      perform pg_notify('cadenza_skills', row.tenant_id || '/' || row.owner_id);
      return null;
    end $$`.execute(db);
  await sql`create trigger skills_listed after insert or delete on skills for each row execute function skills_changed()`.execute(db);
  await sql`
    create trigger skills_relisted after update on skills for each row
    when (old.status is distinct from new.status or old.active_version is distinct from new.active_version
          or old.name is distinct from new.name or old.description is distinct from new.description)
    execute function skills_changed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger skills_relisted on skills`.execute(db);
  await sql`drop trigger skills_listed on skills`.execute(db);
  await sql`drop function skills_changed()`.execute(db);
}
