import type { Kysely } from 'kysely';

// What the mission's USER CONTEXT held of the user's memories and why the rest was left out (`MemoryAccount`), written
// by prepareMission and shown by `GET /missions/:id`. Null on missions prepared before, and until prepared.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').addColumn('context_memories', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('context_memories').execute();
}
