import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { EVAL_RUN_WORKFLOW, evalRunWorkflowId, type EvalBaseline } from '../contracts/evals.ts';
import { ConflictError, NotFoundError } from '../contracts/errors.ts';
import { findOwnedEvalRun, finishEvalRunRow, insertEvalRun, listEvalResults } from '../db/evals.ts';
import type { Owner } from '../db/owner.ts';
import { findOwnedSkill, getSkillVersion } from '../db/skills.ts';
import { benchmarkJson } from '../evals/benchmark.ts';
import { summarise } from '../evals/eval-summary.ts';
import { refuseWithoutModel } from '../missions/start-mission.ts';
import type { ApiDeps } from './deps.ts';

/** What `POST /skills/:id/evals` takes (validated by its schema). */
export type EvalRunRequest = {
  version: number;
  against?: 'active' | 'none' | number | undefined;
  cases?: Array<string | number> | undefined;
  repeats: number;
  maxCostUsd: number;
};

type Deps = Pick<ApiDeps, 'db' | 'temporal' | 'config'>;

/**
 * Records an eval run of one of the owner's skill versions and starts its workflow. The baseline is the active version
 * (the default when there is one other than the candidate), no skill, or a version by number. 404 for a skill or version
 * that is not the caller's, or cases it does not have; 409 for a version without eval cases or compared with itself.
 */
export async function startEvalRun(deps: Deps, owner: Owner, skillId: string, req: EvalRunRequest): Promise<{ evalRunId: string }> {
  refuseWithoutModel(deps);
  const found = await findOwnedSkill(deps.db, owner, skillId);
  if (!found) throw new NotFoundError('skill not found');
  const { skill } = found;
  const version = await getSkillVersion(deps.db, skill.id, req.version);
  if (!version) throw new NotFoundError(`skill ${skill.name} has no version ${req.version}`, { field: 'version' });
  const suite = version.evals?.cases ?? [];
  if (suite.length === 0)
    throw new ConflictError(`version ${req.version} of skill ${skill.name} has no eval cases (evals/evals.json in its folder)`, {
      fields: [{ field: 'version', message: 'has no eval cases' }],
    });
  const wanted = (req.cases ?? suite.map((c) => c.id)).map(String);
  const unknown = wanted.filter((id) => !suite.some((c) => c.id === id));
  if (unknown.length > 0)
    throw new NotFoundError(`cases: version ${req.version} has no case ${unknown.join(', ')}`, {
      fields: [{ field: 'cases', message: `unknown case ${unknown.join(', ')}` }],
    });
  const baseline = await resolveBaseline(deps, skill, req);
  const run = await insertEvalRun(deps.db, {
    id: randomUUID(),
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    skill_id: skill.id,
    skill_name: skill.name,
    version: req.version,
    baseline,
    case_ids: [...new Set(wanted)],
    repeats: req.repeats,
    max_cost_usd: req.maxCostUsd,
  });
  try {
    await deps.temporal.workflow.start(EVAL_RUN_WORKFLOW, {
      workflowId: evalRunWorkflowId(run.id),
      taskQueue: deps.config.temporal.taskQueue,
      args: [{ evalRunId: run.id }],
    });
  } catch (err) {
    // Never started: the run says so instead of claiming to run.
    await finishEvalRunRow(deps.db, run.id, 'failed', { reason: 'its workflow could not be started' });
    throw err;
  }
  return { evalRunId: run.id };
}

async function resolveBaseline(
  deps: Deps,
  skill: { id: string; name: string; status: string; active_version: number },
  req: EvalRunRequest,
): Promise<EvalBaseline> {
  const active = skill.status === 'active' && skill.active_version !== req.version ? skill.active_version : undefined;
  const against = req.against ?? (active !== undefined ? 'active' : 'none');
  if (against === 'none') return { kind: 'none' };
  if (against === 'active') {
    if (active === undefined)
      throw new ConflictError(`skill ${skill.name} has no active version other than ${req.version} to compare with: use against "none"`);
    return { kind: 'version', version: active };
  }
  if (against === req.version)
    throw new ConflictError('against: a version is not compared with itself', {
      fields: [{ field: 'against', message: 'is the version under review' }],
    });
  if (!(await getSkillVersion(deps.db, skill.id, against)))
    throw new NotFoundError(`skill ${skill.name} has no version ${against}`, { field: 'against' });
  return { kind: 'version', version: against };
}

/** The owner's eval run with its figures so far (progress while it runs). */
export async function describeEvalRun(deps: Deps, owner: Owner, id: string) {
  const run = await findOwnedEvalRun(deps.db, owner, id);
  if (!run) throw new NotFoundError('eval run not found');
  const summary = summarise(run, await listEvalResults(deps.db, run.id));
  return { run, summary };
}

/** The owner's eval run as the convention's benchmark.json. */
export async function evalRunBenchmark(deps: Deps, owner: Owner, id: string) {
  const run = await findOwnedEvalRun(deps.db, owner, id);
  if (!run) throw new NotFoundError('eval run not found');
  return benchmarkJson(run, await listEvalResults(deps.db, run.id));
}

/** Cancels a running eval run as a whole: its workflow cancels the missions still running. */
export async function cancelEvalRun(deps: Deps, owner: Owner, id: string): Promise<void> {
  const run = await findOwnedEvalRun(deps.db, owner, id);
  if (!run) throw new NotFoundError('eval run not found');
  if (run.status !== 'running') throw new ConflictError(`eval run is already ${run.status}`);
  try {
    await deps.temporal.workflow.getHandle(evalRunWorkflowId(id)).cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ConflictError('eval run has already finished');
    throw err;
  }
}
