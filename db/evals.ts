import type { Kysely } from 'kysely';
import type { EvalGrade, EvalRunStatus, EvalUnit } from '../contracts/evals.ts';
import type { EvalResultRow, EvalRunRow } from './eval-tables.ts';
import { whereOwner, type Owner } from './owner.ts';
import type { Database } from './schema.ts';

export type NewEvalRun = Omit<EvalRunRow, 'status' | 'summary' | 'created_at' | 'finished_at' | 'baseline' | 'case_ids'> & {
  baseline: EvalRunRow['baseline'];
  case_ids: string[];
};

export async function insertEvalRun(db: Kysely<Database>, run: NewEvalRun): Promise<EvalRunRow> {
  return db
    .insertInto('eval_runs')
    .values({ ...run, baseline: JSON.stringify(run.baseline), case_ids: JSON.stringify(run.case_ids), status: 'running' })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getEvalRun(db: Kysely<Database>, id: string): Promise<EvalRunRow> {
  return db.selectFrom('eval_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The owner's eval run; undefined for one that is missing or someone else's. */
export async function findOwnedEvalRun(db: Kysely<Database>, owner: Owner, id: string): Promise<EvalRunRow | undefined> {
  return db.selectFrom('eval_runs').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}

/** The latest eval run of a version that ended with figures (completed or budget reached). */
export async function latestFinishedEvalRun(db: Kysely<Database>, skillId: string, version: number): Promise<EvalRunRow | undefined> {
  return latestEvalRun(db, skillId, version, ['completed', 'budget_reached']);
}

/** The latest eval run of a version, in any of `statuses` (any status when none are given). */
export async function latestEvalRun(
  db: Kysely<Database>,
  skillId: string,
  version: number,
  statuses?: EvalRunStatus[],
): Promise<EvalRunRow | undefined> {
  let q = db.selectFrom('eval_runs').selectAll().where('skill_id', '=', skillId).where('version', '=', version);
  if (statuses) q = q.where('status', 'in', statuses);
  return q.orderBy('created_at', 'desc').limit(1).executeTakeFirst();
}

export async function listEvalResults(db: Kysely<Database>, runId: string): Promise<EvalResultRow[]> {
  return db
    .selectFrom('eval_results')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('case_id')
    .orderBy('repeat')
    .orderBy('side')
    .execute();
}

const unitKey = (runId: string, unit: EvalUnit) => ({ run_id: runId, case_id: unit.caseId, side: unit.side, repeat: unit.repeat });

export async function findEvalResult(db: Kysely<Database>, runId: string, unit: EvalUnit): Promise<EvalResultRow | undefined> {
  const k = unitKey(runId, unit);
  return db
    .selectFrom('eval_results')
    .selectAll()
    .where('run_id', '=', k.run_id)
    .where('case_id', '=', k.case_id)
    .where('side', '=', k.side)
    .where('repeat', '=', k.repeat)
    .executeTakeFirst();
}

/** Records a unit's mission as running; a repeat (a retried start) keeps the first row. */
export async function recordEvalStart(db: Kysely<Database>, runId: string, unit: EvalUnit, missionId: string): Promise<void> {
  await db
    .insertInto('eval_results')
    .values({ ...unitKey(runId, unit), mission_id: missionId, status: 'running', cost_usd: null, duration_ms: null, reason: null })
    .onConflict((oc) => oc.columns(['run_id', 'case_id', 'side', 'repeat']).doNothing())
    .execute();
}

/** A unit's grade; only a running unit takes one, so a retried grading never overwrites the first. */
export async function recordEvalGrade(db: Kysely<Database>, runId: string, unit: EvalUnit, grade: EvalGrade): Promise<void> {
  const k = unitKey(runId, unit);
  await db
    .updateTable('eval_results')
    .set({
      status: grade.passed ? 'passed' : 'failed',
      expectations: JSON.stringify(grade.expectations),
      cost_usd: grade.costUsd,
      grading_cost_usd: grade.gradingCostUsd,
      duration_ms: grade.durationMs,
      reason: grade.reason,
    })
    .where('run_id', '=', k.run_id)
    .where('case_id', '=', k.case_id)
    .where('side', '=', k.side)
    .where('repeat', '=', k.repeat)
    .where('status', '=', 'running')
    .execute();
}

/** Units that never ran (or whose mission a cancel stopped) as `not_run`, with why. */
export async function recordNotRun(db: Kysely<Database>, runId: string, units: EvalUnit[], reason: string): Promise<void> {
  if (units.length === 0) return;
  await db
    .insertInto('eval_results')
    .values(
      units.map((u) => ({ ...unitKey(runId, u), mission_id: null, status: 'not_run' as const, cost_usd: null, duration_ms: null, reason })),
    )
    .onConflict((oc) => oc.columns(['run_id', 'case_id', 'side', 'repeat']).doUpdateSet({ status: 'not_run', reason }))
    .execute();
}

/** Ends a running run with its status and figures; a run already ended keeps its end. */
export async function finishEvalRunRow(
  db: Kysely<Database>,
  id: string,
  status: Exclude<EvalRunStatus, 'running'>,
  summary: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable('eval_runs')
    .set({ status, summary: JSON.stringify(summary), finished_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}
