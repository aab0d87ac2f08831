import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { DomainError } from '../contracts/errors.ts';
import type { DelegationRequest, RemainingBudget } from '../contracts/delegation.ts';
import { missionDepth } from '../db/mission-tree.ts';
import { insertMissionOnce } from '../db/missions.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { findOwnedSkillByName, getSkillVersion } from '../db/skills.ts';
import { missionLimits } from './mission-limits.ts';
import { runnableSkill } from './mission-skill.ts';
import { newMissionRow } from './start-mission.ts';

export type ChildMissionDeps = {
  db: Kysely<Database>;
  config: Pick<Config, 'model' | 'budgets' | 'maxTurnsCap' | 'maxDelegationDepth'>;
};

/**
 * Records the child mission a `delegate` call asked for, `running` from the start: it runs on its root's admission
 * slot, so no admission pass sees it (admission skips rows with a parent). Refused, with the reason the model reads,
 * when the caller's skill does not list the target, the target is not one of the owner's active skills, the tree is at
 * MAX_DELEGATION_DEPTH, or the caller's budget is spent. The child's budgets are carved from what the caller has left.
 * Idempotent: a retry finds the row its first attempt wrote (the id is the workflow's).
 */
export async function recordChildMission(
  deps: ChildMissionDeps,
  parent: MissionRow,
  child: { id: string; request: DelegationRequest; remaining: RemainingBudget },
): Promise<{ ok: true; row: MissionRow } | { ok: false; error: string }> {
  const { db, config } = deps;
  const { request, remaining } = child;
  const owner = { tenantId: parent.tenant_id, userId: parent.user_id };
  const own = await getSkillVersion(db, parent.skill_id, parent.skill_version);
  const delegates = own?.spec.delegates ?? [];
  if (!delegates.includes(request.skill))
    return { ok: false, error: `skill: ${parent.skill_name} may delegate only to ${delegates.join(', ') || 'no skill'}` };
  const depth = await missionDepth(db, parent.id, config.maxDelegationDepth + 1);
  if (depth + 1 > config.maxDelegationDepth)
    return {
      ok: false,
      error: `this mission is at delegation depth ${depth}: a sub-mission would pass MAX_DELEGATION_DEPTH (${config.maxDelegationDepth}); do the work here`,
    };
  const carved = carve(request, remaining);
  if (typeof carved === 'string') return { ok: false, error: carved };
  try {
    const found = runnableSkill(await findOwnedSkillByName(db, owner, request.skill), request.skill);
    const limits = missionLimits(config, found.version.spec, { maxTurns: request.maxTurns, ...carved });
    const row = newMissionRow(owner, found, limits, {
      id: child.id,
      objective: request.objective,
      workspaceCode: parent.workspace_code,
      idempotencyKey: `delegate:${child.id}`,
    });
    const { row: inserted } = await insertMissionOnce(db, { ...row, status: 'running', parent_id: parent.id });
    return { ok: true, row: inserted };
  } catch (err) {
    // The skill is not the owner's, not active, or its tier or price is missing: the model reads why and goes on.
    if (err instanceof DomainError) return { ok: false, error: err.message };
    throw err;
  }
}

/** The child's budgets: what the model asked for, never more than the caller has left; refused when nothing is left. */
function carve(request: DelegationRequest, remaining: RemainingBudget): { maxCostUsd?: number; maxTokens?: number } | string {
  if (remaining.maxCostUsd !== undefined && remaining.maxCostUsd <= 0) return 'the cost budget of this mission is spent';
  if (remaining.maxTokens !== undefined && remaining.maxTokens <= 0) return 'the token budget of this mission is spent';
  const cost = [request.maxCostUsd, remaining.maxCostUsd].filter((v) => v !== undefined);
  return {
    ...(cost.length ? { maxCostUsd: Math.min(...cost) } : {}),
    ...(remaining.maxTokens !== undefined ? { maxTokens: Math.floor(remaining.maxTokens) } : {}),
  };
}
