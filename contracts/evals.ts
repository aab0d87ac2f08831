import { defineQuery } from '@temporalio/workflow';
import type { EventsPage } from './events.ts';

/**
 * The eval run's contract: the skill's eval cases as stored with a version (read from `evals/evals.json`), the eval
 * run workflow and its id, the units it runs (one case on one side, one repeat) and the activities it calls. Each unit
 * is a real mission of the run's owner, started through the same start path as `POST /missions`.
 */
export const EVAL_RUN_WORKFLOW = 'evalRunWorkflow';
/** The eval run's workflow id (the run's id is its business id). */
export const evalRunWorkflowId = (evalRunId: string): string => `eval-run-${evalRunId}`;

/** One eval case, as `evals/evals.json` gives it (Agent Skills' convention, plus Cadenza's `stubs` and `workspace`). */
export type EvalCase = {
  /** The case's id as written (a number in the convention), as text. */
  id: string;
  prompt: string;
  expectedOutput?: string;
  /** Paths of bundle files the case's missions are given (their text goes into the mission's context). */
  files: string[];
  /** What must hold of the answer: the postcondition grammar (`output contains "…"`, `json.total == 12`, `tool_called a.b`) or prose. */
  expectations: string[];
  /** Tools whose calls return this recorded answer instead of calling out, by `<app-id>.<tool-name>`. */
  stubs: Record<string, unknown>;
  workspace?: string;
};

/** A version's eval cases (the usable ones, for an import read leniently). */
export type EvalSuite = { cases: EvalCase[] };

/** Which side of the comparison a mission runs: the version under review, or the baseline. */
export type EvalSide = 'candidate' | 'baseline';

/** What the baseline runs: no skill at all (same tools, no procedure) or another version of the skill. */
export type EvalBaseline = { kind: 'none' } | { kind: 'version'; version: number };

/** One mission of the run: a case on a side, the repeat-th time (from 1). */
export type EvalUnit = { caseId: string; side: EvalSide; repeat: number };

/** How an eval run ended. */
export type EvalRunStatus = 'running' | 'completed' | 'budget_reached' | 'cancelled' | 'failed';

/** How one expectation came out: `error` is a grading error (unreadable grader answer), never a pass. */
export type ExpectationResult = { text: string; status: 'passed' | 'failed' | 'error'; by: 'rule' | 'grader'; reason?: string };

/** A unit's grade: pass when every expectation passed; the mission's cost and duration; what the grader call cost. */
export type EvalGrade = {
  passed: boolean;
  expectations: ExpectationResult[];
  costUsd: number;
  gradingCostUsd: number;
  durationMs: number;
  reason: string | null;
};

/** How a unit came out. */
export type EvalUnitStatus = 'running' | 'passed' | 'failed' | 'not_run';

/** What a mission of an eval runs with: the version it runs, whether its procedure is in the prompt, the stubs. */
export type EvalMissionSetup = { instructions: boolean; stubs: Record<string, unknown> };

export type EvalRunInput = { evalRunId: string };

/**
 * One event of an eval run's log, streamed as a mission's are (`GET /eval-runs/:id/events`, `id:` its seq): each unit's
 * mission started, ended and graded (or never run), then the run's figures and its terminal status, the last event.
 */
export type EvalRunEvent = { seq: number; at: string } & (
  | { type: 'run_status'; status: EvalRunStatus }
  | ({ type: 'unit_started'; missionId: string } & EvalUnit)
  | ({ type: 'unit_finished'; missionId: string } & EvalUnit)
  | ({ type: 'unit_graded'; missionId: string; status: 'passed' | 'failed'; costUsd: number } & EvalUnit)
  | ({ type: 'unit_not_run'; reason: string } & EvalUnit)
  | ({ type: 'run_summary' } & EvalRunFigures)
);
/** The mission's events query (`events`), as an eval run answers it. */
export const evalRunEventsQuery = defineQuery<EventsPage<EvalRunEvent>, [afterSeq: number]>('events');
export type EvalRunEventBody = EvalRunEvent extends infer E ? (E extends unknown ? Omit<E, 'seq' | 'at'> : never) : never;

/** One side's figures at the run's end. */
export type EvalSideFigures = { graded: number; passed: number; passRate: number; costUsd: number; costPerCaseUsd: number };
/** The run's figures as its last events carry them (the case table is `GET /eval-runs/:id`'s). */
export type EvalRunFigures = {
  progress: { total: number; graded: number; running: number; notRun: number };
  candidate: EvalSideFigures;
  baseline: EvalSideFigures;
  delta: { passRate: number; overRepeats: { mean: number; stddev: number; min: number; max: number } };
  /** What the grader calls cost, charged to the run's budget beside the missions (absent from runs ended before). */
  grading?: { costUsd: number };
};

/** The run's plan, read once: its units in order and its budget. */
export type EvalPlan = { units: EvalUnit[]; maxCostUsd: number; lanes: number };

export interface EvalActivities {
  /** The run's units (cases × sides × repeats, repeat by repeat) and budget. */
  planEvalRun(input: EvalRunInput): Promise<EvalPlan>;
  /** Starts the unit's mission idempotently (key `<evalRunId>/<case>/<side>/<repeat>`); undefined when refused. */
  startEvalMission(input: EvalRunInput & { unit: EvalUnit; maxCostUsd: number }): Promise<{ missionId?: string; refused?: string }>;
  /** Returns once the mission's workflow has closed, however it ended. */
  awaitEvalMission(input: { missionId: string }): Promise<void>;
  /**
   * Grades the ended mission against the case's expectations, once (a stored grade is returned): the mission's cost and
   * the grader call's (absent in results recorded before it was kept).
   */
  gradeEvalMission(
    input: EvalRunInput & { unit: EvalUnit; missionId: string },
  ): Promise<{ costUsd: number; gradingCostUsd?: number; status: 'passed' | 'failed' }>;
  /**
   * Records the end: units never run as `not_run`, the status, the summary; a cancelled run cancels its missions. Returns
   * the figures and the units it marked not run (those a cancel stopped among them), for the run's event log.
   */
  finishEvalRun(
    input: EvalRunInput & { status: Exclude<EvalRunStatus, 'running'>; notRun: EvalUnit[] },
  ): Promise<{ figures: EvalRunFigures; notRun: EvalUnit[]; reason: string }>;
}
