import type { Kysely } from 'kysely';

// Which encoder made a stored vector (`endpoint:<model>`, `sentence-encoder:<model dir>`, `word-vectors:<name>`): two
// encoders of the same width give vectors of the same length that must never be compared, so the length alone cannot
// say. Null on vectors stored before: the worker's re-embedding pass treats them as another encoder's and redoes them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('memories').addColumn('embedding_model', 'text').execute();
  await db.schema.alterTable('skill_chunks').addColumn('embedding_model', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skill_chunks').dropColumn('embedding_model').execute();
  await db.schema.alterTable('memories').dropColumn('embedding_model').execute();
}
