import { Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import type { Tier } from '../contracts/model.ts';
import type { EvalCase, EvalGrade, ExpectationResult } from '../contracts/evals.ts';
import type { Config } from '../config/config.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { listToolCalls } from '../db/transcript.ts';
import { ModelCallError } from '../model/model-types.ts';
import type { ModelTargets } from '../model/model-targets.ts';
import { callCostUsd } from '../model/pricing.ts';
import { gradeRule, isRule, type EvalOutcome } from './expectations.ts';
import { GRADER_INSTRUCTION, graderMessage, readVerdicts } from './grader.ts';

/** What grading needs: the database, the grader's tier (EVAL_GRADER_TIER), the tiers' models and their prices. */
export type GraderDeps = {
  db: Kysely<Database>;
  modelTargets: ModelTargets;
  evals: Pick<Config['evals'], 'graderTier'>;
  config: { model: Pick<Config['model'], 'prices'> };
};

/** Attempts after which a grader that keeps failing is a grading error rather than a wait. */
const GRADER_ATTEMPTS = 5;
const GRADER_MAX_TOKENS = 2_048;

/** A unit's grade (`EvalGrade`). */
export type Grade = EvalGrade;

/**
 * Grades an ended mission against its case: rules without a model, prose in one grader call (a context of its own) for
 * all of the case's prose expectations. A mission that did not complete passes nothing.
 */
export async function gradeMission(deps: GraderDeps, evalCase: EvalCase, mission: MissionRow): Promise<Grade> {
  const costUsd = mission.result?.metrics.costUsd ?? 0;
  const durationMs = mission.finished_at ? mission.finished_at.getTime() - mission.created_at.getTime() : 0;
  if (mission.status !== 'completed' || !mission.result) {
    const reason = `the mission ended ${mission.status}${mission.error ? `: ${mission.error.message}` : ''}`;
    const expectations = evalCase.expectations.map((text): ExpectationResult => ({ text, status: 'failed', by: 'rule', reason }));
    return { passed: false, expectations, costUsd, gradingCostUsd: 0, durationMs, reason };
  }
  const calls = await listToolCalls(deps.db, mission.id);
  const outcome: EvalOutcome = { output: mission.result.text, toolsCalled: [...new Set(calls.map((c) => c.tool))] };
  const prose = evalCase.expectations.filter((e) => !isRule(e));
  const graded = prose.length > 0 ? await askGrader(deps, evalCase, outcome, prose) : { verdicts: [], costUsd: 0 };
  const expectations = evalCase.expectations.map((text) =>
    isRule(text) ? gradeRule(text, outcome) : graded.verdicts[prose.indexOf(text)]!,
  );
  return {
    passed: expectations.every((e) => e.status === 'passed'),
    expectations,
    costUsd,
    gradingCostUsd: graded.costUsd,
    durationMs,
    reason: null,
  };
}

/** The grader's verdicts on the prose expectations, and what its call cost (0 for a call that never answered). */
async function askGrader(
  deps: GraderDeps,
  evalCase: EvalCase,
  outcome: EvalOutcome,
  prose: string[],
): Promise<{ verdicts: ExpectationResult[]; costUsd: number }> {
  const ctx = Context.current();
  const tier = deps.evals.graderTier as Tier;
  const resolved = deps.modelTargets.resolve(tier, 0);
  const error = (reason: string) => ({
    verdicts: prose.map((text): ExpectationResult => ({ text, status: 'error', by: 'grader', reason })),
    costUsd: 0,
  });
  if (!resolved) return error(`the grader tier ${tier} has no model`);
  try {
    const reply = await resolved.client.complete({
      model: resolved.target.model,
      system: GRADER_INSTRUCTION,
      messages: [graderMessage(evalCase, outcome, prose)],
      tools: [],
      maxTokens: GRADER_MAX_TOKENS,
      signal: ctx.cancellationSignal,
    });
    return {
      verdicts: readVerdicts(reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'), prose),
      costUsd: callCostUsd(deps.config.model.prices, [resolved.target.model, reply.model], reply.usage),
    };
  } catch (err) {
    if (ctx.cancellationSignal.aborted) throw err;
    // A provider that is overloaded or down is waited out a few times; a refusal is an answer: a grading error.
    const retry = err instanceof ModelCallError ? err.retryable : true;
    if (retry && ctx.info.attempt < GRADER_ATTEMPTS) throw err;
    return error(`the grader could not be asked: ${(err as Error).message}`);
  }
}
