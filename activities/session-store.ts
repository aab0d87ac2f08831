import { getMission, updateMissionIfStatus } from '../db/missions.ts';
import { completionMemory } from './completion-memory.ts';
import { embedForStorage } from '../memory/retrieve.ts';
import { recordExchange } from '../db/mission-exchanges.ts';
import { storeMissionEvents } from '../db/mission-events.ts';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionResult } from '../contracts/mission.ts';
import type { ActivityDeps } from './deps.ts';
import { gatherEmbedResults } from './embed-context.ts';

/**
 * A session's own writes: each exchange's result as it answers, `idle` ↔ `running` on the mission's row, and the events
 * of a run that continues as new.
 */
export function createSessionStoreActivities({ db, embeddings, logger }: ActivityDeps) {
  return {
    async completeExchange(input: {
      missionId: string;
      exchange: number;
      fromTurn: number;
      result: MissionResult;
    }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>> {
      const [gathered, mission] = await Promise.all([
        gatherEmbedResults(db, input.missionId, input.fromTurn),
        getMission(db, input.missionId),
      ]);
      const result = { ...input.result, ...gathered };
      // Each exchange leaves what a mission's end does: a completion memory and a feed row.
      const memory = completionMemory(mission, result, input.exchange);
      const embedding = await embedForStorage({ db, embeddings, logger }, memory.content);
      await recordExchange(db, input.missionId, input.exchange, result, {
        memory: { ...memory, embedding },
        feed: {
          missionId: input.missionId,
          eventKey: `${input.missionId}/exchange/${input.exchange}`,
          kind: 'exchange_end',
          outcome: 'completed',
          durationMs: result.metrics.elapsedMs,
          details: {
            exchange: input.exchange,
            turns: result.metrics.turns,
            toolCalls: result.metrics.toolCalls,
            resultLength: result.text.length,
            stoppedBy: result.stoppedBy,
            costUsd: result.metrics.costUsd,
          },
        },
      });
      return gathered;
    },
    async continueSession({ missionId }: { missionId: string }): Promise<void> {
      await updateMissionIfStatus(db, missionId, 'idle', { status: 'running' });
    },
    async storeEvents({ missionId, events }: { missionId: string; events: MissionEvent[] }): Promise<void> {
      await storeMissionEvents(db, missionId, events);
    },
  };
}
