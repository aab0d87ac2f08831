import type { Kysely } from 'kysely';

// Skills that grow: the mission that wrote a skill (create_skill, or promoted from a run) and each version a mission
// wrote (update_skill); and, on every mission, the provenance of the skill bytes it ran and loaded.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skills').addColumn('mission_id', 'text').execute();
  await db.schema.alterTable('skill_versions').addColumn('mission_id', 'text').execute();
  await db.schema.alterTable('missions').addColumn('provenance', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('provenance').execute();
  await db.schema.alterTable('skill_versions').dropColumn('mission_id').execute();
  await db.schema.alterTable('skills').dropColumn('mission_id').execute();
}
