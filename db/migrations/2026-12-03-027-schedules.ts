import { sql, type Kysely } from 'kysely';

// Recurring missions (issue 30). A schedule's timing lives in its Temporal Schedule; this row holds what each run
// starts (skill, objective, workspace, limits) and the spec as the owner gave it, so reads never need Temporal.
// `schedule_runs` records every run the schedule's start workflow took, its run key being that workflow's id (the
// mission's idempotency key): a run refused by admission is kept with its reason. Missions keep their schedule id
// after the schedule is deleted (no foreign key), so `?scheduleId=` still finds them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('skill', 'text', (c) => c.notNull())
    .addColumn('objective', 'text', (c) => c.notNull())
    .addColumn('workspace_code', 'text', (c) => c.notNull())
    .addColumn('spec', 'jsonb', (c) => c.notNull())
    .addColumn('overlap', 'text', (c) => c.notNull())
    .addColumn('catchup_window', 'text', (c) => c.notNull())
    .addColumn('limits', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('schedules_owner').on('schedules').columns(['tenant_id', 'user_id', 'created_at']).execute();
  await db.schema
    .createTable('schedule_runs')
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
    .addColumn('run_key', 'text', (c) => c.notNull().unique())
    .addColumn('scheduled_at', 'timestamptz', (c) => c.notNull())
    .addColumn('mission_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('started', 'refused', 'failed')`))
    .addColumn('reason', 'text')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('schedule_runs_recent').on('schedule_runs').columns(['schedule_id', 'at']).execute();
  await db.schema.alterTable('missions').addColumn('schedule_id', 'text').execute();
  await sql`create index missions_schedule on missions (schedule_id, created_at) where schedule_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index missions_schedule`.execute(db);
  await db.schema.alterTable('missions').dropColumn('schedule_id').execute();
  await db.schema.dropTable('schedule_runs').execute();
  await db.schema.dropTable('schedules').execute();
}
