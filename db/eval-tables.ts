import type { ColumnType, Selectable } from 'kysely';
import type { EvalBaseline, EvalRunStatus, EvalSide, EvalUnitStatus, ExpectationResult } from '../contracts/evals.ts';

/** One eval run: a version of a skill compared with its baseline over some cases, some repeats, within a budget. */
export interface EvalRunsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  skill_id: string;
  skill_name: string;
  /** The version under review (the candidate). */
  version: number;
  baseline: ColumnType<EvalBaseline, string, never>;
  /** The cases run, in order. */
  case_ids: ColumnType<string[], string, never>;
  repeats: number;
  max_cost_usd: number;
  status: ColumnType<EvalRunStatus, EvalRunStatus, EvalRunStatus>;
  /** The figures of a finished run (`evals/eval-summary.ts`); null while it runs. */
  summary: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** One unit of a run: a case on one side, one repeat; its mission, and once graded its expectations. */
export interface EvalResultsTable {
  run_id: string;
  case_id: string;
  side: EvalSide;
  repeat: number;
  mission_id: string | null;
  status: EvalUnitStatus;
  expectations: ColumnType<ExpectationResult[] | null, string | null | undefined, string | null>;
  cost_usd: number | null;
  /** What grading the unit cost (its grader call); null until graded, 0 when no grader was asked. */
  grading_cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
  duration_ms: number | null;
  /** Why a unit did not run, or why its mission did not complete. */
  reason: string | null;
}

export type EvalRunRow = Selectable<EvalRunsTable>;
export type EvalResultRow = Selectable<EvalResultsTable>;
