import type { EvalSide } from '../contracts/evals.ts';
import type { EvalResultRow, EvalRunRow } from '../db/eval-tables.ts';
import { stat, type Stat } from './eval-summary.ts';

const signed = (n: number, digits: number) => `${n >= 0 ? '+' : ''}${n.toFixed(digits)}`;

/**
 * The run as the Agent Skills evaluation convention's `benchmark.json`: metadata, one entry per graded run (a
 * configuration's run of one eval: its expectations and pass rate, the share of expectations met), and `run_summary`
 * with mean/stddev/min/max per configuration and the delta. The baseline is `without_skill`, or `old_skill` when it
 * is another version.
 */
export function benchmarkJson(run: EvalRunRow, rows: EvalResultRow[]) {
  const configuration = (s: EvalSide) => (s === 'candidate' ? 'with_skill' : run.baseline.kind === 'none' ? 'without_skill' : 'old_skill');
  const runs = rows
    .filter((r) => r.status === 'passed' || r.status === 'failed')
    .map((r) => {
      const expectations = r.expectations ?? [];
      const passed = expectations.filter((e) => e.status === 'passed').length;
      return {
        eval_id: /^\d+$/.test(r.case_id) ? Number(r.case_id) : r.case_id,
        configuration: configuration(r.side),
        run_number: r.repeat,
        mission_id: r.mission_id,
        result: {
          pass_rate: expectations.length ? passed / expectations.length : r.status === 'passed' ? 1 : 0,
          passed,
          failed: expectations.length - passed,
          total: expectations.length,
          time_seconds: (r.duration_ms ?? 0) / 1000,
          cost_usd: r.cost_usd ?? 0,
          errors: expectations.filter((e) => e.status === 'error').length,
        },
        expectations: expectations.map((e) => ({ text: e.text, passed: e.status === 'passed', evidence: e.reason ?? '' })),
      };
    });
  const summary = (name: string) => {
    const mine = runs.filter((r) => r.configuration === name);
    return {
      pass_rate: stat(mine.map((r) => r.result.pass_rate)),
      time_seconds: stat(mine.map((r) => r.result.time_seconds)),
      cost_usd: stat(mine.map((r) => r.result.cost_usd)),
    };
  };
  const withSkill = summary('with_skill');
  const baseName = configuration('baseline');
  const base = summary(baseName);
  const delta = (a: Stat, b: Stat, digits: number) => signed(a.mean - b.mean, digits);
  return {
    metadata: {
      skill_name: run.skill_name,
      skill_version: run.version,
      baseline: run.baseline.kind === 'none' ? 'none' : `version ${run.baseline.version}`,
      eval_run_id: run.id,
      timestamp: (run.finished_at ?? run.created_at).toISOString(),
      evals_run: run.case_ids.map((id) => (/^\d+$/.test(id) ? Number(id) : id)),
      runs_per_configuration: run.repeats,
    },
    runs,
    run_summary: {
      with_skill: withSkill,
      [baseName]: base,
      delta: {
        pass_rate: delta(withSkill.pass_rate, base.pass_rate, 2),
        time_seconds: delta(withSkill.time_seconds, base.time_seconds, 1),
        cost_usd: delta(withSkill.cost_usd, base.cost_usd, 4),
      },
    },
    notes: run.status === 'budget_reached' ? ['the eval run reached its budget: some runs did not run'] : [],
  };
}
