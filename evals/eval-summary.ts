import type { EvalSide } from '../contracts/evals.ts';
import type { EvalResultRow, EvalRunRow } from '../db/eval-tables.ts';

/** Mean, standard deviation (population), min and max; zeros for no values. */
export type Stat = { mean: number; stddev: number; min: number; max: number };

export function stat(values: number[]): Stat {
  if (values.length === 0) return { mean: 0, stddev: 0, min: 0, max: 0 };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const stddev = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  return { mean: round(mean), stddev: round(stddev), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const graded = (r: EvalResultRow) => r.status === 'passed' || r.status === 'failed';

/** One side's figures: cases passed of those graded, cost and mission duration. */
export type SideFigures = { graded: number; passed: number; passRate: number; costUsd: number; costPerCaseUsd: number; durationMs: Stat };

function side(rows: EvalResultRow[]): SideFigures {
  const done = rows.filter(graded);
  const passed = done.filter((r) => r.status === 'passed').length;
  const costUsd = round(done.reduce((a, r) => a + (r.cost_usd ?? 0), 0));
  return {
    graded: done.length,
    passed,
    passRate: done.length ? round(passed / done.length) : 0,
    costUsd,
    costPerCaseUsd: done.length ? round(costUsd / done.length) : 0,
    durationMs: stat(done.map((r) => r.duration_ms ?? 0)),
  };
}

/**
 * The run's figures from its units: progress, each side's pass rate (a case passes when all its expectations pass),
 * the delta (candidate − baseline) with its spread over repeats, and one row per case and repeat with both missions.
 */
export function summarise(run: Pick<EvalRunRow, 'repeats' | 'case_ids'>, rows: EvalResultRow[]) {
  const of = (s: EvalSide) => rows.filter((r) => r.side === s);
  const total = run.case_ids.length * run.repeats * 2;
  const perRepeat = Array.from({ length: run.repeats }, (_, i) => i + 1).flatMap((repeat) => {
    const [c, b] = (['candidate', 'baseline'] as const).map((s) => side(of(s).filter((r) => r.repeat === repeat)));
    return c!.graded > 0 && b!.graded > 0 ? [c!.passRate - b!.passRate] : [];
  });
  const candidate = side(of('candidate'));
  const baseline = side(of('baseline'));
  return {
    progress: {
      total,
      graded: rows.filter(graded).length,
      running: rows.filter((r) => r.status === 'running').length,
      notRun: rows.filter((r) => r.status === 'not_run').length,
    },
    candidate,
    baseline,
    delta: { passRate: round(candidate.passRate - baseline.passRate), overRepeats: stat(perRepeat) },
    grading: { costUsd: round(rows.reduce((a, r) => a + (r.grading_cost_usd ?? 0), 0)) },
    cases: run.case_ids.flatMap((caseId) =>
      Array.from({ length: run.repeats }, (_, i) => {
        const unit = (s: EvalSide) => {
          const row = rows.find((r) => r.case_id === caseId && r.repeat === i + 1 && r.side === s);
          const failing = (row?.expectations ?? []).filter((e) => e.status !== 'passed').map((e) => ({ ...e }));
          return {
            status: row?.status ?? 'pending',
            missionId: row?.mission_id ?? null,
            ...(row?.reason ? { reason: row.reason } : {}),
            failing,
          };
        };
        return { caseId, repeat: i + 1, candidate: unit('candidate'), baseline: unit('baseline') };
      }),
    ),
  };
}

export type EvalSummary = ReturnType<typeof summarise>;
