import { ApplicationFailure } from '@temporalio/activity';
import { getMission, updateMission } from '../db/missions.ts';
import { getSkillVersion } from '../db/skills.ts';
import { describeUnavailable } from '../tools/availability.ts';
import { buildSystemPrompt } from './prompt.ts';
import type { Omitted } from './tool-catalog.ts';
import { buildUserContext } from './user-context.ts';
import { completionMemory, embedAfterwards, resultFeedEntry } from './completion-memory.ts';
import { recordExchange } from '../db/mission-exchanges.ts';
import { storeMissionEvents } from '../db/mission-events.ts';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionResult } from '../contracts/mission.ts';
import type { ActivityDeps } from './deps.ts';
import { readMissionResults } from './embed-context.ts';
import { leaveAfterAnswer } from './after-answer.ts';

/**
 * A session's own writes: each exchange's result as it answers (the mission `idle`), the user context each later
 * exchange starts from, and the events of a run that continues as new. (A message's wake-up takes its slot through
 * admission/.)
 */
export function createSessionStoreActivities({ db, embeddings, vectors, logger }: ActivityDeps) {
  return {
    async completeExchange(input: {
      missionId: string;
      exchange: number;
      fromTurn: number;
      result: MissionResult;
    }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>> {
      const { mission, gathered } = await readMissionResults(db, input.missionId, input.fromTurn);
      const result = { ...input.result, ...gathered };
      // Each exchange leaves what a mission's end does: a completion memory and a feed row.
      const memory = completionMemory(mission, result, input.exchange);
      const owedEndpoints = await recordExchange(db, input.missionId, input.exchange, result, {
        memory,
        feed: resultFeedEntry(input.missionId, result, input.exchange),
      });
      leaveAfterAnswer({ owedEndpoints });
      embedAfterwards({ db, embeddings, logger }, memory);
      return gathered;
    },
    /**
     * The next exchange's system prompt: the frozen procedure and catalog under the user context read now, so a
     * preference or memory saved while the session was idle applies (the model calls of the exchange read it once).
     */
    async continueSession({ missionId }: { missionId: string }): Promise<void> {
      const mission = await getMission(db, missionId);
      const [version, context] = await Promise.all([
        getSkillVersion(db, mission.skill_id, mission.skill_version),
        buildUserContext({ db, embeddings, vectors, logger }, mission),
      ]);
      if (!version) throw ApplicationFailure.nonRetryable(`skill version ${mission.skill_version} not found`, 'SkillMissing');
      const omitted = (mission.tool_selection?.unavailable ?? []) as Omitted[];
      const systemPrompt = buildSystemPrompt({
        skillName: mission.skill_name,
        body: version.body,
        tools: mission.catalog ?? [],
        unavailable: omitted.map((o) => describeUnavailable(o.tool, o)),
        userContext: context.text,
      });
      await updateMission(db, missionId, { system_prompt: systemPrompt, context_memories: JSON.stringify(context.memories) });
    },
    async storeEvents({ missionId, events }: { missionId: string; events: MissionEvent[] }): Promise<void> {
      await storeMissionEvents(db, missionId, events);
    },
  };
}
