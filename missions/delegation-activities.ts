import { Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { DELEGATE, type DelegationActivities, type DelegationEnd, type DelegationSpent } from '../contracts/delegation.ts';
import type { MissionEndStatus, ToolCallResult } from '../contracts/mission.ts';
import { startEmbed } from '../db/embeds.ts';
import { recordToolFeed } from '../db/feed.ts';
import { treeModelCalls } from '../db/mission-tree.ts';
import { getMission, updateMissionIfStatus } from '../db/missions.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { putToolCall } from '../db/transcript.ts';
import { finishEmbed } from '../activities/tool-embeds.ts';
import { callCostUsd } from '../model/pricing.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import { parseDelegation } from '../tools/system/delegate.ts';
import { recordChildMission, type ChildMissionDeps } from './child-mission.ts';

const TOOL = `${SYSTEM_APP_ID}.${DELEGATE}`;
const ENDED: readonly string[] = ['completed', 'failed', 'cancelled'];

/**
 * The steps of a `delegate` call around its child workflow: prepare (check, record the child's row, start the call's
 * feed row and embed) and finish (the child's answer as the call's output, what its tree spent). Registered on the
 * missions task queue by the worker; each is idempotent under retries.
 */
export function createDelegationActivities(deps: ChildMissionDeps & { config: Pick<Config, 'model'> }): DelegationActivities {
  const { db } = deps;
  return {
    async prepareDelegation(input) {
      const call = { missionId: input.missionId, turn: input.turn, toolUseId: input.toolUseId, tool: TOOL };
      await recordToolFeed(db, call, 'start');
      await startEmbed(db, { ...call, id: input.embedId });
      const parsed = parseDelegation(input.input);
      if (!parsed.ok) return parsed;
      const parent = await getMission(db, input.missionId);
      const recorded = await recordChildMission(deps, parent, { id: input.childId, request: parsed.request, remaining: input.remaining });
      if (!recorded.ok) return recorded;
      const { row } = recorded;
      return { ok: true, skill: row.skill_name, skillVersion: row.skill_version, userKey: `${row.tenant_id}/${row.user_id}` };
    },

    async finishDelegation(input): Promise<DelegationEnd> {
      const child = await db.selectFrom('missions').selectAll().where('id', '=', input.childId).executeTakeFirst();
      // Its workflow is over (or never started): a row it did not end is ended here, so no child stays `running`.
      const settled = child && !ENDED.includes(child.status) ? await settle(db, child, input.cancelled, input.error) : child;
      const spent = settled ? await spentBy(db, deps.config, settled) : { inputTokens: 0, outputTokens: 0, costUsd: 0 };
      const status = settled?.status as MissionEndStatus | undefined;
      if (input.cancelled) return { spent, ...(status ? { status } : {}) };
      const reply = answerOf(settled, input.error);
      const started = settled ? new Date(settled.created_at).getTime() : Date.now();
      const durationMs = Math.max(0, (settled?.finished_at ? new Date(settled.finished_at).getTime() : Date.now()) - started);
      const call = { missionId: input.missionId, turn: input.turn, toolUseId: input.toolUseId, tool: TOOL };
      await putToolCall(db, {
        ...call,
        status: reply.ok ? 'completed' : 'error',
        output: reply.ok ? reply.result : { error: reply.error },
        durationMs,
        attempt: 1,
        attemptScheduledMs: Context.current().info.currentAttemptScheduledTimestampMs,
      });
      const embed = await finishEmbed(db, { ...call, id: input.embedId }, reply, 1);
      const result: ToolCallResult = {
        ...(reply.ok ? { status: 'completed', durationMs } : { status: 'error', durationMs, error: reply.error.slice(0, 300) }),
        embed,
      };
      await recordToolFeed(db, call, 'end', result, settled ? { childId: settled.id } : undefined);
      return { result, spent, ...(status ? { status } : {}) };
    },
  };
}

/** The model's view of the child's end: its answer and id, or why it did not answer. */
function answerOf(child: MissionRow | undefined, error: string | undefined): { ok: true; result: unknown } | { ok: false; error: string } {
  if (!child) return { ok: false, error: error ?? 'the sub-mission did not start' };
  if (child.status === 'completed' && child.result)
    return { ok: true, result: { missionId: child.id, skill: child.skill_name, answer: child.result.text } };
  const why = child.error ? `${child.error.phase}: ${child.error.message}` : (error ?? 'no answer');
  return { ok: false, error: `the sub-mission ${child.id} (${child.skill_name}) ${child.status}: ${why}` };
}

async function settle(db: Kysely<Database>, child: MissionRow, cancelled: boolean, error: string | undefined): Promise<MissionRow> {
  const status = cancelled ? 'cancelled' : 'failed';
  const message = cancelled ? 'the delegate call was cancelled' : (error ?? 'the sub-mission ended without a record');
  await updateMissionIfStatus(db, child.id, child.status, {
    status,
    error: JSON.stringify({ phase: 'start', message }),
    finished_at: new Date(),
  });
  return getMission(db, child.id);
}

/**
 * What the child's tree spent. A completed child's own result counts it exactly (its children included); any other end
 * left no result, so its tree's model calls are priced from MODEL_PRICES (cache reads counted at the input rate).
 */
async function spentBy(db: Kysely<Database>, config: Pick<Config, 'model'>, child: MissionRow): Promise<DelegationSpent> {
  const metrics = child.status === 'completed' ? child.result?.metrics : undefined;
  if (metrics) return { inputTokens: metrics.inputTokens, outputTokens: metrics.outputTokens, costUsd: metrics.costUsd };
  const calls = await treeModelCalls(db, child.id);
  return calls.reduce(
    (sum, c) => ({
      inputTokens: sum.inputTokens + c.input_tokens,
      outputTokens: sum.outputTokens + c.output_tokens,
      costUsd: sum.costUsd + callCostUsd(config.model.prices, [c.model], { inputTokens: c.input_tokens, outputTokens: c.output_tokens }),
    }),
    { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  );
}
