import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { findMissionByIdempotencyKey, insertMissionOnce } from '../db/missions.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import {
  MISSION_WORKFLOW,
  SkillSearchAttribute,
  StatusSearchAttribute,
  UserSearchAttribute,
  missionWorkflowId,
  type MissionInput,
} from '../workflows/definitions.ts';
import { missionLimits } from './mission-limits.ts';
import { resolveMissionSkill } from './mission-skill.ts';

export type StartMissionRequest = {
  skill: string;
  objective: string;
  workspaceCode: string;
  conversationContext?: string | undefined;
  maxTurns?: number | undefined;
  idempotencyKey?: string | undefined;
  maxTokens?: number | undefined;
  maxCostUsd?: number | undefined;
};

/**
 * Records the mission and starts its workflow. The same idempotency key gives the same mission; a start that
 * failed half-way (row written, Temporal unreachable) is completed by the retry.
 */
export async function startMission(
  deps: {
    db: Kysely<Database>;
    temporal: Client;
    config: Pick<Config, 'maxTurnsCap' | 'temporal' | 'model' | 'budgets' | 'skills'>;
    embeddings?: EmbeddingsClient | undefined;
  },
  owner: Owner,
  req: StartMissionRequest,
): Promise<{ row: MissionRow; created: boolean }> {
  // A repeat answers with the mission the key already names, whatever happened to its skill since.
  const existing = req.idempotencyKey ? await findMissionByIdempotencyKey(deps.db, owner, req.idempotencyKey) : undefined;
  const { row, created } = existing ? { row: existing, created: false } : await recordMission(deps, owner, req);
  // Starting is idempotent (one workflow id per mission), so a start that failed half-way is completed by a retry.
  if (row.status === 'running') await startWorkflow(deps, row);
  return { row, created };
}

/** Resolves the skill and the mission's limits, and inserts the mission row (once per idempotency key). */
async function recordMission(deps: Parameters<typeof startMission>[0], owner: Owner, req: StartMissionRequest) {
  const found = await resolveMissionSkill(deps, owner, req);
  const { limits, budget } = missionLimits(deps.config, found.version.spec, req);
  return insertMissionOnce(deps.db, {
    id: randomUUID(),
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    skill_id: found.skill.id,
    skill_name: found.skill.name,
    skill_version: found.version.version,
    objective: req.objective,
    workspace_code: req.workspaceCode,
    conversation_context: req.conversationContext ?? null,
    idempotency_key: req.idempotencyKey ?? null,
    max_turns: limits.maxTurns.value,
    max_tokens: budget.maxTokens ?? null,
    max_cost_usd: budget.maxCostUsd ?? null,
    status: 'running',
    catalog: null,
    result: null,
    error: null,
    limits: JSON.stringify(limits),
  });
}

async function startWorkflow(deps: { temporal: Client; config: Pick<Config, 'temporal'> }, row: MissionRow): Promise<void> {
  const input: MissionInput = { missionId: row.id, maxTurns: row.max_turns, modelTaskQueue: deps.config.temporal.modelTaskQueue };
  try {
    await deps.temporal.workflow.start(MISSION_WORKFLOW, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: missionWorkflowId(row.id),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: SkillSearchAttribute, value: row.skill_name },
        { key: UserSearchAttribute, value: `${row.tenant_id}/${row.user_id}` },
        { key: StatusSearchAttribute, value: 'running' },
      ],
      staticSummary: `${row.skill_name} v${row.skill_version} · ${truncate(row.objective, 120)}`,
      staticDetails: `**Skill:** ${row.skill_name} v${row.skill_version}\n\n**Objective:** ${truncate(row.objective, 1000)}`,
      memo: { tenantId: row.tenant_id, userId: row.user_id, skill: row.skill_name, skillVersion: row.skill_version },
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
