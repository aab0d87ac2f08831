import { ApplicationFailure, condition, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { MISSION_ENDED, NOT_A_SESSION } from '../contracts/messages.ts';
import type { MissionPlan, MissionResult } from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';
import { retakeSlot, type Admission } from './admission-wait.ts';
import type { EventLog } from './event-log.ts';
import type { Messages } from './messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/**
 * A session: after each answer the mission records the exchange and waits `idle` (a durable timer of the plan's idle
 * TTL) for the next message, which starts the next exchange with the transcript kept; the TTL or the `closeSession`
 * update ends it `completed`, a cancel `cancelled`. Between the two a long run continues as new (session-chain.ts). An
 * idle session holds no admission slot: the message that wakes it takes one, waiting `queued` when none is free.
 */
export function createSession(opts: { missionId: string; eventLog: EventLog; messages: Messages; admission: Admission }) {
  const { missionId, eventLog, messages, admission } = opts;
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
    /** Whether a close came (the session ends at its next idle point). */
    closing: (): boolean => closing,
    /** Exchange `exchange` (from turn `fromTurn`) answered: recorded, and the mission `idle`; the result as recorded. */
    async answered(exchange: number, fromTurn: number, answer: MissionResult): Promise<MissionResult> {
      const gathered = await store.completeExchange.executeWithOptions({ summary: `exchange ${exchange} answered` }, [
        { missionId, exchange, fromTurn, result: answer },
      ]);
      const result = { ...answer, ...gathered };
      eventLog.exchangeEnded(result);
      eventLog.statusChanged({ type: 'status', status: 'idle' });
      return result;
    },
    /**
     * Idle after exchange `exchange` until `idleUntil` (workflow time) at most: true when a message came (the next
     * exchange starts), false when the session ends (closed, or idle until then; no message is taken from then on).
     */
    async next(exchange: number, idleUntil: number): Promise<boolean> {
      setCurrentDetails(`**idle** after exchange ${exchange} · ends at ${new Date(idleUntil).toISOString()} without a message`);
      // At least 1 ms: a condition with a zero timeout would wait forever.
      await condition(() => messages.waiting() || closing, Math.max(1, idleUntil - Date.now()));
      // Deciding to end and refusing later messages are one step (no await between them); a close wins over a message.
      if (closing || !messages.waiting()) {
        messages.end();
        return false;
      }
      await retakeSlot(missionId, 'idle', admission, () => eventLog.statusChanged({ type: 'status', status: 'queued' }));
      // The exchange reads the user's profile and memories as they are now, not as they were at the start.
      await store.continueSession.executeWithOptions({ summary: 'session continues' }, [{ missionId }]);
      eventLog.statusChanged({ type: 'status', status: 'running' });
      return true;
    },
  };
}
