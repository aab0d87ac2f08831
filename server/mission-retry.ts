import { insertStart } from '../admission/admission.ts';
import { randomUUID } from 'node:crypto';
import { callCostUsd } from '../model/pricing.ts';
import type { Config } from '../config/config.ts';
import { recordFeedEvent } from '../db/feed.ts';
import { copyRunRecords, findRetryOf, readRunRecords, type RunRecords } from '../db/mission-retry.ts';
import { findMissionByIdempotencyKey, findOwnedMission } from '../db/missions.ts';
import type { Owner } from '../db/owner.ts';
import type { MissionRow } from '../db/schema.ts';
import { findOwnedSkill, getSkillVersion } from '../db/skills.ts';
import type { ContentBlock, ToolUseBlock } from '../model/model-types.ts';
import type { MissionResume, ToolOutcome } from '../contracts/mission.ts';
import { ConflictError, NotFoundError, UnprocessableError } from '../contracts/errors.ts';
import { launchMission, rateLimited, refuseWithoutModel, type MissionDeps } from '../missions/start-mission.ts';

export type RetryMissionRequest = { fromTurn?: number | undefined; idempotencyKey?: string | undefined };

/**
 * Starts a new mission that goes on where a failed or cancelled one stopped: same skill version, objective, context
 * and limits; the turns whose model reply and tool results are complete (or those before `fromTurn`) are copied with
 * the new row, in one transaction, and the workflow resumes after them. 404 for a mission the caller does not own,
 * 409 unless it failed or was cancelled (or when it was retried already), 422 when its skill version is no longer the
 * active one or `fromTurn` is past the last complete turn, 429 beyond MAX_STARTS_PER_MINUTE_PER_USER (a retry is a
 * start). The same idempotency key answers with the same retry.
 */
export async function retryMission(
  deps: MissionDeps,
  owner: Owner,
  missionId: string,
  req: RetryMissionRequest,
): Promise<{ row: MissionRow; created: boolean }> {
  const old = await findOwnedMission(deps.db, owner, missionId);
  if (!old) throw new NotFoundError('mission not found');
  refuseWithoutModel(deps);
  if (req.idempotencyKey) {
    const existing = await findMissionByIdempotencyKey(deps.db, owner, req.idempotencyKey);
    if (existing && existing.retry_of !== old.id)
      throw new ConflictError(`idempotencyKey already names mission ${existing.id}, which is not a retry of this mission`);
    if (existing) return launchMission(deps, existing, false);
  }
  if (old.status !== 'failed' && old.status !== 'cancelled')
    throw new ConflictError(`only a failed or cancelled mission can be retried; this one is ${old.status}`);
  const retriedBy = await findRetryOf(deps.db, old.id);
  if (retriedBy) throw new ConflictError(`mission was already retried by ${retriedBy}`);
  const modelId = await activeVersionModel(deps, owner, old);
  const resume = resumePoint(old.id, await readRunRecords(deps.db, old.id), {
    prices: deps.config.model.prices,
    modelId,
    fromTurn: req.fromTurn,
  });
  const { row, created } = await deps.db.transaction().execute(async (trx) => {
    // A start like any other: counted against MAX_STARTS_PER_MINUTE_PER_USER (a 429 writes nothing), queued under limits.
    const inserted = await insertStart(trx, deps.config, {
      id: randomUUID(),
      tenant_id: old.tenant_id,
      user_id: old.user_id,
      skill_id: old.skill_id,
      skill_name: old.skill_name,
      skill_version: old.skill_version,
      objective: old.objective,
      workspace_code: old.workspace_code,
      conversation_context: old.conversation_context,
      embed_refs: old.embed_refs ? JSON.stringify(old.embed_refs) : null,
      idempotency_key: req.idempotencyKey ?? null,
      max_turns: old.max_turns,
      max_tokens: old.max_tokens,
      max_cost_usd: old.max_cost_usd,
      status: 'starting',
      catalog: null,
      result: null,
      error: null,
      limits: old.limits ? JSON.stringify(old.limits) : null,
      output_schema: old.output_schema ? JSON.stringify(old.output_schema) : null,
      retry_of: old.id,
      resume: JSON.stringify(resume),
    }).catch((err: unknown) => {
      // Two retries of one mission at once: the unique index lets one through.
      if ((err as { constraint?: string }).constraint === 'missions_retry_of')
        throw new ConflictError('mission is being retried by another request');
      return rateLimited(err);
    });
    if (!inserted.created) return inserted;
    const to = inserted.row.id;
    await copyRunRecords(trx, { from: old.id, to, lastSeq: 2 * (resume.turn - 1), beforeTurn: resume.turn });
    await recordFeedEvent(trx, {
      missionId: to,
      eventKey: `${to}/retry`,
      kind: 'mission_retry',
      details: { retryOf: old.id, resumedAtTurn: resume.turn },
    });
    return inserted;
  });
  if (created) deps.logger.info('mission retried', { missionId: row.id, retryOf: old.id, resumedAtTurn: resume.turn });
  return launchMission(deps, row, created);
}

/** The model the mission's skill version runs on; 422 naming `skill` when that version is no longer the active one. */
async function activeVersionModel(deps: MissionDeps, owner: Owner, old: MissionRow): Promise<string | undefined> {
  const skill = (await findOwnedSkill(deps.db, owner, old.skill_id))?.skill;
  const active = skill?.status === 'active' && skill.active_version === old.skill_version;
  if (!active) {
    const now = !skill ? 'gone' : skill.status !== 'active' ? skill.status : `replaced by version ${skill.active_version}`;
    throw new UnprocessableError(
      `skill ${old.skill_name} version ${old.skill_version} is no longer active (${now}): start a new mission instead`,
      { fields: [{ field: 'skill', message: `version ${old.skill_version} is no longer active` }] },
    );
  }
  const version = await getSkillVersion(deps.db, old.skill_id, old.skill_version);
  return version ? (deps.config.model.tiers as Readonly<Record<string, string>>)[version.spec.tier] : undefined;
}

/**
 * Where a retry resumes, from the first run's records at their fixed positions (objective at 0, turn t's reply at
 * 2t-1, the tool results it asked for at 2t). Turn t is complete when its reply asked for tools and either the
 * results message of those tools is stored or every one of them has a stored output. A reply without tool use (an
 * answer, or cut off) is the mission's end, so it is never carried: the retry asks the model again.
 */
export function resumePoint(
  retryOf: string,
  records: RunRecords,
  o: { prices: Config['model']['prices']; modelId: string | undefined; fromTurn: number | undefined },
): MissionResume {
  const at = new Map(records.messages.map((m) => [m.seq, m.content as ContentBlock[]]));
  const usesOf = (turn: number) => (at.get(2 * turn - 1) ?? []).filter((b): b is ToolUseBlock => b.type === 'tool_use');
  const stored = (turn: number) => records.toolCalls.filter((c) => c.turn === turn);
  let complete = 0;
  for (let t = 1; at.has(2 * t - 1); t++) {
    const uses = usesOf(t);
    const outputs = new Set(stored(t).map((c) => c.tool_use_id));
    if (uses.length === 0 || !(at.has(2 * t) || uses.every((u) => outputs.has(u.id)))) break;
    complete = t;
  }
  const turn = o.fromTurn ?? complete + 1;
  if (turn > complete + 1) {
    throw new UnprocessableError(`fromTurn ${turn} is past the last complete turn (${complete}): at most ${complete + 1}`, {
      fields: [{ field: 'fromTurn', message: `at most ${complete + 1}` }],
    });
  }
  const carried = Array.from({ length: turn - 1 }, (_, i) => i + 1);
  // The results of the last carried turn: copied as the stored message when there is one, else built again by the
  // resumed model call from these outcomes and the copied tool outputs.
  const last = turn - 1;
  const previous: ToolOutcome[] =
    last === 0 || at.has(2 * last)
      ? []
      : usesOf(last).map((u) => {
          const status = stored(last).find((c) => c.tool_use_id === u.id)!.status;
          return { toolUseId: u.id, status: status === 'completed' ? 'completed' : 'error' };
        });
  const spent = { toolCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  for (const t of carried) {
    spent.toolCalls += usesOf(t).length;
    const call = records.modelCalls.find((c) => c.call_key === `turn-${t}`);
    if (!call) continue;
    const usage = { inputTokens: call.input_tokens, outputTokens: call.output_tokens };
    spent.inputTokens += usage.inputTokens;
    spent.outputTokens += usage.outputTokens;
    spent.costUsd += callCostUsd(o.prices, [o.modelId, call.model], usage);
  }
  return { retryOf, turn, previous, spent };
}
