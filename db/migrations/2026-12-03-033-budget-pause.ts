import type { Kysely } from 'kysely';

// A mission started with `budgetPolicy: "pause"` waits `paused` at its budget for at most this many seconds
// (BUDGET_PAUSE_TIMEOUT_S when it started) instead of making the forced final call; null: the budget ends it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').addColumn('budget_pause_s', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('missions').dropColumn('budget_pause_s').execute();
}
