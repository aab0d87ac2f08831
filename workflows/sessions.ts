import { ApplicationFailure, condition, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { MISSION_ENDED, NOT_A_SESSION } from '../contracts/messages.ts';
import type { MissionPlan, MissionResult } from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';
import type { EventLog } from './event-log.ts';
import type { Messages } from './messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/**
 * A session: after each answer the mission records the exchange and waits `idle` (a durable timer of the plan's idle
 * TTL) for the next message, which starts the next exchange with the transcript kept; the TTL or the `closeSession`
 * update ends it `completed`, a cancel `cancelled`.
 */
export function createSession(opts: { missionId: string; eventLog: EventLog; messages: Messages }) {
  const { missionId, eventLog, messages } = opts;
  let closing = false;
  const refuse = (type: string, message: string) => {
    throw ApplicationFailure.create({ type, message });
  };

  return {
    /** The update's validator: refuses, writing no history, a mission that ended or that is not a session. */
    validateClose(plan: MissionPlan | undefined): void {
      if (messages.ended()) refuse(MISSION_ENDED, 'the mission has already ended');
      if (plan && !plan.session)
        refuse(NOT_A_SESSION, 'the mission is not a session: cancel it instead (POST /api/v1/missions/:id/cancel)');
    },
    /** Idle: the session ends now; running: once the exchange in progress answers. */
    close(): { status: 'closing' } {
      closing = true;
      return { status: 'closing' };
    },
    /**
     * Exchange `exchange` (from turn `fromTurn`) answered: recorded, then idle (for `idleTtlS` at most) until a message comes (`goOn`: the next
     * exchange starts) or the session ends (closed, or idle for the whole TTL; no message is taken from then on).
     */
    async answered(
      idleTtlS: number,
      exchange: number,
      fromTurn: number,
      answer: MissionResult,
    ): Promise<{ result: MissionResult; goOn: boolean }> {
      const gathered = await store.completeExchange.executeWithOptions({ summary: `exchange ${exchange} answered` }, [
        { missionId, exchange, fromTurn, result: answer },
      ]);
      const result = { ...answer, ...gathered };
      eventLog.exchangeEnded(result);
      eventLog.statusChanged({ type: 'status', status: 'idle' });
      setCurrentDetails(`**idle** after exchange ${exchange} · ends after ${idleTtlS} s without a message`);
      await condition(() => messages.waiting() || closing, idleTtlS * 1000);
      // Deciding to end and refusing later messages are one step (no await between them); a close wins over a message.
      if (closing || !messages.waiting()) {
        messages.end();
        return { result, goOn: false };
      }
      await store.continueSession.executeWithOptions({ summary: 'session continues' }, [{ missionId }]);
      eventLog.statusChanged({ type: 'status', status: 'running' });
      return { result, goOn: true };
    },
  };
}
