import { updateMissionIfStatus } from '../db/missions.ts';
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
export function createSessionStoreActivities({ db }: ActivityDeps) {
  return {
    async completeExchange(input: {
      missionId: string;
      exchange: number;
      fromTurn: number;
      result: MissionResult;
    }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>> {
      const gathered = await gatherEmbedResults(db, input.missionId, input.fromTurn);
      await recordExchange(db, input.missionId, input.exchange, { ...input.result, ...gathered });
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
