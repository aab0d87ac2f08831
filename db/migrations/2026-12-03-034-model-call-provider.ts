import type { Kysely } from 'kysely';

// The provider that answered a model call: with fallback chains (MODEL_TIER_<TIER>_FALLBACKS) a turn may be answered
// by another provider than MODEL_PROVIDER. Null on the rows written before.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('model_calls').addColumn('provider', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('model_calls').dropColumn('provider').execute();
}
