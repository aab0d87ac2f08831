import type { Kysely } from 'kysely';

// Typed results (issue 35 part 3): the JSON Schema a mission's answer must match, from its start or its skill's
// `metadata.cadenza-output-schema`, frozen on the row so every model call of the mission reads the same one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').addColumn('output_schema', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('output_schema').execute();
}
