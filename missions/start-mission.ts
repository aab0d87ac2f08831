import { ensureSearchAttributes, isMissingSearchAttribute, SearchAttributesMissing } from '../temporal/search-attributes.ts';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { modelUnconfigured, type Config } from '../config/config.ts';
import { StartRateExceeded, admitQueued, insertUnderLimits, wakeAdmitted } from '../admission/admission.ts';
import { findMissionByIdempotencyKey, getMission } from '../db/missions.ts';
import { getEmbeds } from '../db/embeds.ts';
import { provenanceEntry } from '../db/provenance.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, MissionRow, NewMission, SkillRow, SkillVersionRow } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { SkillRead } from '../db/skills.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import { markRunning, startMissionWorkflow } from '../admission/mission-start.ts';
import { admitSignal, missionWorkflowId } from '../contracts/mission.ts';
import { ModelUnconfiguredError, NotFoundError, RateLimitedError, UnavailableError, UnprocessableError } from '../contracts/errors.ts';
import { outputSchemaProblem } from '../lib/output-schema.ts';
import { missionLimits } from './mission-limits.ts';
import { evalMissionSkill, resolveMissionSkill } from './mission-skill.ts';
import type { EvalMissionSetup } from '../contracts/evals.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';

export type StartMissionRequest = {
  /** The mission's id when the caller names it (an AG-UI thread); a fresh UUID otherwise. */
  id?: string | undefined;
  skill: string;
  objective: string;
  workspaceCode: string;
  conversationContext?: string | undefined;
  maxTurns?: number | undefined;
  idempotencyKey?: string | undefined;
  maxTokens?: number | undefined;
  maxCostUsd?: number | undefined;
  /** At the budget: a forced final answer (`final`, the default) or a wait `paused` for a raise (`pause`). */
  budgetPolicy?: 'final' | 'pause' | undefined;
  /** Embeds of the caller's whose content goes into the mission's context. */
  embedRefs?: string[] | undefined;
  /** A session: idle after each answer, continued by messages (also when the skill sets `cadenza-session`). */
  session?: boolean | undefined;
  /** The JSON Schema the answer must match (over the skill's `cadenza-output-schema`); checked here, 400 when invalid. */
  outputSchema?: Record<string, unknown> | undefined;
  /**
   * The skill `skill` names as `POST /missions` read it in its key's statement (never from the request body): taken
   * instead of reading it again; absent, the start reads it.
   */
  skillRead?: SkillRead | undefined;
  /** The schedule starting this mission (never from the request body: only a scheduled run sets it). */
  scheduleId?: string | undefined;
  /**
   * An eval run's mission (never from the request body): it runs this version of the owner's skill `skill` names by
   * id, whatever the skill's status (review comes after the eval), with the setup the case gives.
   */
  eval?: { skillId: string; version: number; setup: EvalMissionSetup } | undefined;
};

export type MissionDeps = {
  db: Kysely<Database>;
  temporal: Client;
  config: Pick<Config, 'maxTurnsCap' | 'temporal' | 'model' | 'budgets' | 'skills' | 'admission' | 'sessions'>;
  embeddings?: EmbeddingsClient | undefined;
  /** How discovery compares vectors for `skill: "auto"` (pgvector or in process), chosen at start. */
  vectors: VectorSearch;
  logger: Logger;
};

/**
 * Records the mission as `starting`, starts its workflow, then marks it `running`: a row never claims to run before
 * Temporal has the workflow. A start that fails (Temporal unreachable) answers 503 and leaves the row `starting`; the
 * worker's start settler (`admission/start-settler.ts`) settles it in the background once Temporal answers, and the
 * same idempotency key completes that start at once.
 */
export async function startMission(
  deps: MissionDeps,
  owner: Owner,
  req: StartMissionRequest,
): Promise<{ row: MissionRow; created: boolean }> {
  refuseWithoutModel(deps);
  refuseInvalidOutputSchema(req.outputSchema);
  // A repeat answers with the mission the key already names, whatever happened to its skill since.
  const existing = req.idempotencyKey ? await findMissionByIdempotencyKey(deps.db, owner, req.idempotencyKey) : undefined;
  const { row, created } = existing ? { row: existing, created: false } : await recordMission(deps, owner, req);
  return launchMission(deps, row, created);
}

/**
 * 503 at once when the model cannot be reached as configured (no key for the provider's endpoint): otherwise every
 * mission would fail after its model call's retries, minutes later, for a reason the operator must fix.
 */
export function refuseWithoutModel(deps: Pick<MissionDeps, 'config'>): void {
  const why = modelUnconfigured(deps.config.model);
  if (why) throw new ModelUnconfiguredError(`missions cannot run: ${why}`, { variable: 'MODEL_API_KEY' });
}

/**
 * A start's output schema that is not a JSON Schema of an object is a 422 naming it, before anything is recorded: the
 * request is well formed (an object where the contract says one), what it describes is not usable. Not 400: the
 * contract cannot state "a valid JSON Schema" (the metaschema), and a request the contract admits must not be a 400.
 */
function refuseInvalidOutputSchema(schema: Record<string, unknown> | undefined): void {
  const problem = schema === undefined ? undefined : outputSchemaProblem(schema);
  if (problem) throw new UnprocessableError(`outputSchema ${problem}`, { fields: [{ field: 'outputSchema', message: problem }] });
}

/** Starts the workflow of a mission still `starting` and marks it `running` (503 while Temporal is unavailable). */
export async function launchMission(deps: MissionDeps, row: MissionRow, created: boolean): Promise<{ row: MissionRow; created: boolean }> {
  if (row.status === 'queued') return launchQueued(deps, row, created);
  if (row.status !== 'starting') return { row, created };
  await startOr503(deps, row, 'was not started');
  deps.logger.info('mission started', {
    missionId: row.id,
    skill: row.skill_name,
    skillVersion: row.skill_version,
    maxTurns: row.max_turns,
  });
  // A mission quick enough to have ended already keeps its final status.
  return { row: await markRunning(deps, row.id), created };
}

/**
 * A mission recorded `queued` (running limits are set): an admission pass decides. Given a slot, it starts as any
 * mission does; else its workflow starts waiting (status `queued`) and is woken by the pass that gives it a slot.
 * Missions the pass admitted for others are woken too.
 */
async function launchQueued(deps: MissionDeps, row: MissionRow, created: boolean): Promise<{ row: MissionRow; created: boolean }> {
  const others = (await admitQueued(deps)).filter((id) => id !== row.id);
  const now = await getMission(deps.db, row.id);
  try {
    if (now.status === 'starting') return await launchMission(deps, now, created);
    if (now.status !== 'queued') return { row: now, created };
    await startQueuedWorkflow(deps, now);
    // Another process's pass may have given it a slot before its workflow existed: it could not wake it, this can.
    const after = await getMission(deps.db, row.id);
    if (after.status !== 'starting') return { row: after, created };
    await deps.temporal.workflow.getHandle(missionWorkflowId(row.id)).signal(admitSignal);
    return { row: await markRunning(deps, row.id), created };
  } finally {
    await wakeAdmitted(deps, others);
  }
}

/** Starts the mission's workflow; Temporal being unavailable is a 503 saying what became of the mission. */
async function startOr503(deps: MissionDeps, row: MissionRow, state: string): Promise<void> {
  try {
    await startWithSearchAttributes(deps, row);
  } catch (err) {
    if (err instanceof SearchAttributesMissing) throw new UnavailableError(`mission ${row.id} ${state}: ${err.message}`);
    if (!isTemporalUnavailable(err)) throw err;
    const retry = row.idempotency_key
      ? '; it starts once Temporal is back, and a retry with the same idempotencyKey returns it'
      : '; it is marked failed unless its start reached Temporal';
    throw new UnavailableError(`Temporal is unavailable: mission ${row.id} ${state}${retry}`);
  }
}

/**
 * Starts the workflow; a namespace that lost Cadenza's search attributes since start-up (or was never checked, Temporal
 * being down then) has them registered and the start is made again, once.
 */
async function startWithSearchAttributes(deps: MissionDeps, row: MissionRow): Promise<void> {
  try {
    await startMissionWorkflow(deps, row);
  } catch (err) {
    if (!isMissingSearchAttribute(err)) throw err;
    await ensureSearchAttributes(deps.temporal.connection, deps.config.temporal.namespace, deps.logger);
    await startMissionWorkflow(deps, row).catch((again: unknown) => {
      // Registered, but a frontend still holds the namespace's old mapping (a cluster's services cache it up to a minute).
      if (isMissingSearchAttribute(again))
        throw new UnavailableError(
          `mission ${row.id} was not started: Cadenza's search attributes were just registered and Temporal takes up to a minute to use them; retry`,
        );
      throw again;
    });
  }
}

async function startQueuedWorkflow(deps: MissionDeps, row: MissionRow): Promise<void> {
  await startOr503(deps, row, 'is queued but was not started');
  deps.logger.info('mission queued', { missionId: row.id, skill: row.skill_name, skillVersion: row.skill_version });
}

/** Resolves the skill and the mission's limits, and inserts the mission row (once per idempotency key). */
async function recordMission(deps: MissionDeps, owner: Owner, req: StartMissionRequest) {
  const embedRefs = [...new Set(req.embedRefs ?? [])];
  const owned = await getEmbeds(deps.db, owner, embedRefs);
  const missing = embedRefs.filter((id) => !owned.some((e) => e.id === id));
  // Someone else's embed is indistinguishable from a missing one.
  if (missing.length) throw new NotFoundError(`embedRefs: no embed ${missing.join(', ')}`, { field: 'embedRefs', missing });
  const found = req.eval ? await evalMissionSkill(deps, owner, req.eval) : await resolveMissionSkill(deps, owner, req);
  const { limits, budget } = missionLimits(deps.config, found.version.spec, req);
  return insertUnderLimits(deps, {
    ...newMissionRow(owner, found, { limits, budget }, { ...req, id: req.id ?? randomUUID() }),
    embed_refs: embedRefs.length ? JSON.stringify(embedRefs) : null,
    budget_pause_s: req.budgetPolicy === 'pause' ? deps.config.budgets.pauseTimeoutS : null,
    ...(req.session ? { session: true } : {}),
    schedule_id: req.scheduleId ?? null,
    ...(req.eval ? { eval_setup: JSON.stringify(req.eval.setup) } : {}),
  }).catch(rateLimited);
}

/** The row of a new mission (`starting`) that runs the active version of `found` within `limits`. */
export function newMissionRow(
  owner: Owner,
  found: { skill: SkillRow; version: SkillVersionRow },
  { limits, budget }: ReturnType<typeof missionLimits>,
  req: Pick<StartMissionRequest, 'objective' | 'workspaceCode' | 'conversationContext' | 'idempotencyKey' | 'outputSchema'> & {
    id: string;
  },
): NewMission {
  // The start's schema, else the skill's: frozen on the row, so a retry, a restart or a new skill version changes nothing.
  const outputSchema = req.outputSchema ?? found.version.spec.outputSchema;
  return {
    id: req.id,
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    skill_id: found.skill.id,
    skill_name: found.skill.name,
    skill_version: found.version.version,
    objective: req.objective,
    workspace_code: req.workspaceCode,
    conversation_context: req.conversationContext ?? null,
    embed_refs: null,
    idempotency_key: req.idempotencyKey ?? null,
    max_turns: limits.maxTurns.value,
    max_tokens: budget.maxTokens ?? null,
    max_cost_usd: budget.maxCostUsd ?? null,
    budget_pause_s: null,
    status: 'starting',
    catalog: null,
    result: null,
    error: null,
    limits: JSON.stringify(limits),
    provenance: JSON.stringify([provenanceEntry('ran', found.skill, found.version)]),
    output_schema: outputSchema ? JSON.stringify(outputSchema) : null,
  };
}

/** StartRateExceeded as the API's 429 with `Retry-After`; any other error as it is. */
export function rateLimited(err: unknown): never {
  if (!(err instanceof StartRateExceeded)) throw err;
  throw new RateLimitedError(err.message, err.retryAfterS);
}
