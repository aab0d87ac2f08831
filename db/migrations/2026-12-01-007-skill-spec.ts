import { sql, type Kysely } from 'kysely';

// One typed SkillSpec per version, parsed once when the version is stored, so no reader re-reads raw frontmatter;
// and each mission's effective limits with where each came from.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skill_versions').addColumn('spec', 'jsonb').execute();
  // Versions stored before this migration were read with the top-level extensions (`model`, `max-turns`, ...), and
  // imports stored their effective values there: the same spec the parser now writes, computed here in SQL so the
  // migration does not depend on today's parser. Versions are immutable, so the guard trigger steps aside for it.
  await sql`alter table skill_versions disable trigger skill_versions_append_only`.execute(db);
  await sql`
    update skill_versions set spec = jsonb_strip_nulls(jsonb_build_object(
      'tier', coalesce(frontmatter->>'model', 'allegro'),
      'allowedTools', case jsonb_typeof(frontmatter->'allowed-tools')
        when 'array' then frontmatter->'allowed-tools'
        when 'string' then coalesce(
          (select jsonb_agg(t) from regexp_split_to_table(frontmatter->>'allowed-tools', '[[:space:]]+') as t where t <> ''), '[]'::jsonb)
        else '[]'::jsonb end,
      'maxTurns', case jsonb_typeof(frontmatter->'max-turns') when 'number' then frontmatter->'max-turns' end,
      'triggers', case jsonb_typeof(frontmatter->'triggers') when 'array' then frontmatter->'triggers' else '[]'::jsonb end,
      'notFor', case jsonb_typeof(frontmatter->'not_for') when 'array' then frontmatter->'not_for' else '[]'::jsonb end,
      'scripts', case jsonb_typeof(frontmatter->'scripts') when 'array' then frontmatter->'scripts' else '[]'::jsonb end,
      'approval', '[]'::jsonb))`.execute(db);
  await sql`alter table skill_versions enable trigger skill_versions_append_only`.execute(db);
  await db.schema
    .alterTable('skill_versions')
    .alterColumn('spec', (c) => c.setNotNull())
    .execute();
  await db.schema.alterTable('missions').addColumn('limits', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('limits').execute();
  await db.schema.alterTable('skill_versions').dropColumn('spec').execute();
}
