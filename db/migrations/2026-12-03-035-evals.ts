import { sql, type Kysely } from 'kysely';

// Skill evals (issue 33). A version keeps the eval cases its `evals/evals.json` gave (the file itself stays verbatim
// in the bundle). An eval run is one comparison of a version with its baseline; each of its units (a case on one side,
// one repeat) is a mission, recorded in `eval_results` when it starts and graded when it ends, so a resumed run reads
// what it already has. `missions.eval_setup` tells an eval's mission to leave out the procedure or stub tools.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('skill_versions').addColumn('evals', 'jsonb').execute();
  await db.schema.alterTable('missions').addColumn('eval_setup', 'jsonb').execute();
  await db.schema
    .createTable('eval_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('skill_id', 'text', (c) => c.notNull().references('skills.id').onDelete('cascade'))
    .addColumn('skill_name', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('baseline', 'jsonb', (c) => c.notNull())
    .addColumn('case_ids', 'jsonb', (c) => c.notNull())
    .addColumn('repeats', 'integer', (c) => c.notNull())
    .addColumn('max_cost_usd', 'double precision', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('running', 'completed', 'budget_reached', 'cancelled', 'failed')`))
    .addColumn('summary', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('eval_runs_version').on('eval_runs').columns(['skill_id', 'version', 'created_at']).execute();
  await db.schema
    .createTable('eval_results')
    .addColumn('run_id', 'text', (c) => c.notNull().references('eval_runs.id').onDelete('cascade'))
    .addColumn('case_id', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull().check(sql`side in ('candidate', 'baseline')`))
    .addColumn('repeat', 'integer', (c) => c.notNull())
    .addColumn('mission_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('running', 'passed', 'failed', 'not_run')`))
    .addColumn('expectations', 'jsonb')
    .addColumn('cost_usd', 'double precision')
    .addColumn('duration_ms', 'integer')
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('eval_results_pk', ['run_id', 'case_id', 'side', 'repeat'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('eval_results').execute();
  await db.schema.dropTable('eval_runs').execute();
  await db.schema.alterTable('missions').dropColumn('eval_setup').execute();
  await db.schema.alterTable('skill_versions').dropColumn('evals').execute();
}
