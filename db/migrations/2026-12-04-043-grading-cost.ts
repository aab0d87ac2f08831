import type { Kysely } from 'kysely';

// What grading a unit cost (its grader call, priced like a mission's calls), kept apart from the mission's own cost so
// the sides' figures compare missions only, and charged to the eval run's budget beside it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('eval_results').addColumn('grading_cost_usd', 'double precision').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('eval_results').dropColumn('grading_cost_usd').execute();
}
