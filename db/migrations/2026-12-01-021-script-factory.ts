import type { Kysely } from 'kysely';

// The script factory: a version records how it was made (`audit`: the factory's attempts), and a skill may hold one
// version awaiting the owner's review (`draft_version`) while its active version keeps running. Versions stay
// append-only: the review state lives on the skill row, never on the version.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skill_versions').addColumn('audit', 'jsonb').execute();
  await db.schema.alterTable('skills').addColumn('draft_version', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skills').dropColumn('draft_version').execute();
  await db.schema.alterTable('skill_versions').dropColumn('audit').execute();
}
