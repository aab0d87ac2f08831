import type { Kysely } from 'kysely';
import { latestFinishedEvalRun } from '../db/evals.ts';
import type { Database, SkillRow } from '../db/schema.ts';
import type { EvalSummary } from './eval-summary.ts';

/** Why the gate refuses to activate a version, with the eval run it judged by (none when there is no finished run). */
export type GateRefusal = { message: string; evalRunId?: string; delta?: number };

/**
 * The activation gate (SKILL_ACTIVATION_REQUIRES_EVAL): the version under review (the draft version, else the one the
 * skill would run) needs a finished eval run whose candidate pass rate is at least the baseline's minus
 * `maxRegression`. The latest finished run decides; undefined when it passes.
 */
export async function evalGateRefusal(db: Kysely<Database>, skill: SkillRow, maxRegression: number): Promise<GateRefusal | undefined> {
  const version = skill.draft_version ?? skill.active_version;
  const run = await latestFinishedEvalRun(db, skill.id, version);
  if (!run)
    return {
      message: `version ${version} of skill ${skill.name} has no finished eval run: run one (POST /api/v1/skills/${skill.id}/evals) before activating it`,
    };
  const summary = run.summary as EvalSummary | null;
  const delta = summary?.delta.passRate ?? -1;
  if (delta >= -maxRegression) return undefined;
  const rates = summary ? ` (pass rate ${summary.candidate.passRate} against the baseline's ${summary.baseline.passRate})` : '';
  return {
    message: `version ${version} of skill ${skill.name} regressed in eval run ${run.id}: delta ${delta}${rates}, below the allowed -${maxRegression}`,
    evalRunId: run.id,
    delta,
  };
}
