import { sql, type Kysely } from 'kysely';

// Discovery reads a skill's description sentence by sentence and its body line by line (kinds `description` and
// `body`), so an ask that shares no word with the description can still meet the skill's meaning. Versions stored
// before keep their identity and trigger chunks: the new chunks need the encoder, which SQL cannot run.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table skill_chunks drop constraint skill_chunks_kind_check`.execute(db);
  await sql`alter table skill_chunks add constraint skill_chunks_kind_check
    check (kind in ('identity', 'trigger', 'not_for', 'description', 'body'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from skill_chunks where kind in ('description', 'body')`.execute(db);
  await sql`alter table skill_chunks drop constraint skill_chunks_kind_check`.execute(db);
  await sql`alter table skill_chunks add constraint skill_chunks_kind_check check (kind in ('identity', 'trigger', 'not_for'))`.execute(db);
}
