import { ApplicationFailure, Context } from '@temporalio/activity';
import { getMission, updateMission } from '../db/missions.ts';
import { readMissionPreparation } from '../db/mission-preparation.ts';
import { putPlanAndObjective } from '../db/transcript.ts';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionError, MissionPlan, MissionResult } from '../contracts/mission.ts';
import type { ActivityDeps } from './deps.ts';
import { removeUnendedStarts } from '../db/tool-starts.ts';
import { recordFeedEvent } from '../db/feed.ts';
import { recordBudgetPause, recordMissionCompletion } from '../db/mission-completion.ts';
import { missionEndEvent, missionSource, owedEndpoints, webhookEventInsert } from '../db/webhook-events.ts';
import { completionMemory, embedAfterwards, resultFeedEntry } from './completion-memory.ts';
import { describeUnavailable } from '../tools/availability.ts';
import { selectMissionTools } from './tool-catalog.ts';
import { delegateCatalogEntry } from '../tools/system/delegate.ts';
import { buildUserContext } from './user-context.ts';
import type { TranscriptCache } from './transcript-cache.ts';
import type { MissionFactsCache } from './mission-facts.ts';
import { buildSystemPrompt, buildObjectiveMessage } from './prompt.ts';
import { readMissionResults, renderEmbedRefs } from './embed-context.ts';
import { leaveAfterAnswer, recordedEnd } from './after-answer.ts';

export type { CatalogEntry } from './tool-catalog.ts';

/** Activities that read and write the mission's own rows: prepare, complete, fail. */
export function createMissionStoreActivities(
  deps: ActivityDeps,
  { facts, transcripts }: { facts: MissionFactsCache; transcripts: TranscriptCache },
) {
  const { db, embeddings, vectors, logger } = deps;
  return {
    /** Loads the skill version, freezes the tool catalog and the system prompt, writes the opening message. */
    async prepareMission({ missionId }: { missionId: string }): Promise<MissionPlan> {
      // One statement for what the rest starts from: the row, its skill version, the profile, switches and accounts.
      const { mission, version, profile, switches, accounts } = await readMissionPreparation(db, missionId);
      if (!version) throw ApplicationFailure.nonRetryable(`skill version ${mission.skill_version} not found`, 'SkillMissing');
      const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
      // Then at once: the skill's tools, the user's context (memory retrieval, which may run the local encoder on the
      // objective meanwhile) and the embeds the mission was started with.
      const { allowedTools, approval } = version.spec;
      const [tools, context, embedRefs] = await Promise.all([
        selectMissionTools(
          { ...deps, maxTools: deps.maxToolsPerMission },
          { owner, allowedTools, objective: mission.objective, approval, read: { switches, accounts } },
        ),
        buildUserContext({ db, embeddings, vectors, logger }, mission, { profile }),
        mission.embed_refs?.length ? renderEmbedRefs(db, owner, mission.embed_refs) : undefined,
      ]);
      const { spec } = version;
      const { omitted, preselection } = tools;
      // An eval case's stubbed tools answer its recorded answer instead of calling out (the tool activity reads it).
      const stubs = mission.eval_setup?.stubs ?? {};
      const catalog = tools.catalog.map((c) =>
        Object.hasOwn(stubs, c.qualifiedName) ? { ...c, stub: { answer: stubs[c.qualifiedName] } } : c,
      );
      // A skill that names others it may hand work to is offered `delegate`, limited to those.
      if (spec.delegates?.length) catalog.push(delegateCatalogEntry(spec.delegates));
      for (const o of omitted)
        logger.info('tool left out of the mission', { missionId, tool: o.tool, reason: o.reason, provider: o.provider });
      logger.info('memories in the user context', { missionId, ...context.memories });
      const systemPrompt = buildSystemPrompt({
        skillName: mission.skill_name,
        body: mission.eval_setup?.instructions === false ? undefined : version.body,
        tools: catalog,
        unavailable: omitted.map((o) => describeUnavailable(o.tool, o)),
        userContext: context.text,
      });
      // One statement, idempotent: the frozen catalog and prompt, and the opening message (kept in this worker's memory
      // under a stamp the first model call passes back).
      const objective = buildObjectiveMessage(mission, embedRefs);
      const stamp = transcripts.stamp();
      await putPlanAndObjective(
        db,
        missionId,
        {
          catalog: JSON.stringify(catalog),
          system_prompt: systemPrompt,
          tool_selection: JSON.stringify({ unavailable: omitted, ...(preselection ? { preselection } : {}) }),
          context_memories: JSON.stringify(context.memories),
        },
        objective,
        Context.current().info.currentAttemptScheduledTimestampMs,
      );
      transcripts.keepConversation(missionId, stamp, { messages: [objective], nextSeq: 1 });
      const { tenant_id, user_id, output_schema } = mission;
      facts.seed(missionId, { tenant_id, user_id, output_schema, system_prompt: systemPrompt, catalog }, stamp);
      leaveAfterAnswer({ started: { skillName: mission.skill_name } });
      return {
        tier: spec.tier,
        maxTurns: mission.max_turns,
        budget: {
          ...(mission.max_tokens !== null ? { maxTokens: mission.max_tokens } : {}),
          ...(mission.max_cost_usd !== null ? { maxCostUsd: mission.max_cost_usd } : {}),
        },
        tools: catalog.map((c) => ({
          modelName: c.name,
          qualifiedName: c.qualifiedName,
          timeoutS: c.timeoutS,
          retries: c.retries,
          ...(c.approval ? { approval: true } : {}),
          ...(c.client ? { client: true } : {}),
        })),
        approvalTimeoutS: deps.approvalTimeoutS,
        ...(mission.budget_pause_s !== null ? { budgetPause: { timeoutS: mission.budget_pause_s } } : {}),
        // A sub-mission answers its caller once: it is never a session, whatever its skill says.
        ...((mission.session || spec.session) && mission.parent_id === null ? { session: { idleTtlS: deps.sessionIdleTtlS } } : {}),
        ...(deps.compaction.atTokens > 0 ? { compaction: deps.compaction } : {}),
        ...(Object.keys(deps.model.providerLimits).length > 0 ? { providerLimits: true as const } : {}),
        stamp,
      };
    },

    /**
     * Final status and result, the memory summarising it and the feed's completion row; each written once. The result
     * gets the canvas ids and follow-ups of the mission's embeds, which it returns so the workflow's result has them too.
     */
    async completeMission(input: {
      missionId: string;
      result: MissionResult;
      /** The events the workflow logs once this returns. */
      finalEvents: MissionEvent[];
      fromTurn?: number;
    }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>> {
      const { missionId } = input;
      const { mission, gathered } = await readMissionResults(db, missionId, input.fromTurn);
      const result = { ...input.result, ...gathered };
      // A session's end is its last exchange's answer, whose memory that exchange already wrote (same key: none twice).
      const memory = completionMemory(mission, result, input.fromTurn !== undefined ? (mission.exchanges?.length ?? undefined) : undefined);
      // One statement: the status and result, the memory (keyed by the mission: a retried completion stores no
      // second one; its vector follows) and the feed's completion row (keyed too).
      const finishedAt = new Date();
      const owedEndpoints = await recordMissionCompletion(db, missionId, {
        result: JSON.stringify(result),
        finalEvents: JSON.stringify(input.finalEvents),
        finishedAt,
        memory,
        budgetReached: result.stoppedBy === 'budget',
        feed: resultFeedEntry(missionId, result),
      });
      leaveAfterAnswer({ ended: recordedEnd(mission, 'completed', finishedAt), owedEndpoints });
      embedAfterwards({ db, embeddings, logger }, memory);
      // The mission ended: no call reads its transcript again.
      transcripts.forget(missionId);
      return gathered;
    },

    /** Paused at the budget after turn `turn` (`budgetPolicy: "pause"`): the row `paused`, `budget.reached` delivered. */
    async pauseMission({ missionId, turn }: { missionId: string; turn: number }): Promise<void> {
      leaveAfterAnswer({ owedEndpoints: await recordBudgetPause(db, missionId, turn) });
    },

    async failMission(input: { missionId: string; status: 'failed' | 'cancelled'; error: MissionError; finalEvents: MissionEvent[] }) {
      const finishedAt = new Date();
      const { mission, owed } = await db.transaction().execute(async (trx) => {
        const mission = await getMission(trx, input.missionId);
        await removeUnendedStarts(trx, input.missionId);
        await updateMission(trx, input.missionId, {
          status: input.status,
          error: JSON.stringify(input.error),
          final_events: JSON.stringify(input.finalEvents),
          finished_at: finishedAt,
        });
        await recordFeedEvent(trx, {
          missionId: input.missionId,
          eventKey: `${input.missionId}/end`,
          kind: 'mission_end',
          outcome: input.status,
          durationMs: Date.now() - new Date(mission.created_at).getTime(),
          error: input.error.message,
          details: { phase: input.error.phase },
        });
        // Its webhook deliveries commit with the end they report; the statement answers the endpoints owed, to wake.
        const owed = await owedEndpoints(
          trx.with('deliveries', (qc) =>
            webhookEventInsert(qc, missionSource(input.missionId), [missionEndEvent(input.missionId, input.status)]).returning(
              'webhook_id',
            ),
          ),
          input.missionId,
        );
        return { mission, owed };
      });
      leaveAfterAnswer({ ended: recordedEnd(mission, input.status, finishedAt, input.error.phase), owedEndpoints: owed });
      transcripts.forget(input.missionId);
    },
  };
}
