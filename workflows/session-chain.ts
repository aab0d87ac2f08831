import { allHandlersFinished, condition, makeContinueAsNewFunc, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import type { MissionInput, MissionMetrics, MissionPlan, MissionResult } from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';
import type { EventLog } from './event-log.ts';
import { currentCursor } from './events-cursor.ts';
import type { Messages } from './messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/** Where a session stands at its idle point, after exchange `exchange` (from turn `fromTurn`) answered `result`. */
export type IdlePoint = { plan: MissionPlan; exchange: number; fromTurn: number; result: MissionResult; idleUntil: number };

/**
 * A session's runs: at the idle point between exchanges, once the run's history holds SESSION_HISTORY_EVENTS events
 * (or Temporal suggests it), the run stores its events and continues as new, carrying ids and counters only (the
 * transcript is in Postgres). Each exchange so runs in a history of bounded size however long the session lasts; the
 * workflow id stays, so everything addressed to the mission reaches the latest run, and the Web UI shows the chain.
 * Under worker versioning the idle point is also where a session leaves its pinned build: once a newer version is
 * current, the next run starts on it (`AUTO_UPGRADE` for the new run only; it is pinned there again).
 */
export function createSessionChain(opts: {
  input: MissionInput;
  eventLog: EventLog;
  messages: Messages;
  metrics: Omit<MissionMetrics, 'approvalWaitMs'>;
  modelCalls: () => number;
  approvalWaitMs: () => number;
  closing: () => boolean;
}) {
  const { input, eventLog, messages, metrics } = opts;
  const due = (): boolean => {
    const info = workflowInfo();
    const limit = input.sessionHistoryEvents;
    return info.continueAsNewSuggested || info.targetWorkerDeploymentVersionChanged || (limit !== undefined && info.historyLength >= limit);
  };

  return {
    /** Continues as new if the run is long (never returns then); returns at once otherwise, or when a close came. */
    async continueIfDue(at: IdlePoint): Promise<void> {
      if (opts.closing() || !due()) return;
      const events = eventLog.logged();
      if (events.length > 0)
        await store.storeEvents.executeWithOptions({ summary: `store events ${events[0]!.seq}-${events.at(-1)!.seq}` }, [
          { missionId: input.missionId, events },
        ]);
      // Updates accepted meanwhile are part of this run: their replies are sent before it closes.
      await condition(allHandlersFinished);
      // A close that came while the events were stored ends the session here; this run's log holds all it needs.
      if (opts.closing()) return;
      const { turns, toolCalls, inputTokens, outputTokens, costUsd } = metrics;
      const cursor = currentCursor() ?? { upTo: 0, digest: '' };
      // The last steps before the command: no await between reading the queue and continuing, so no message is lost.
      const continueAsNew = makeContinueAsNewFunc<(i: MissionInput) => Promise<MissionResult>>({
        typedSearchAttributes: workflowInfo().typedSearchAttributes,
        initialVersioningBehavior: 'AUTO_UPGRADE',
      });
      const { missionId, modelTaskQueue, toolTaskQueue, maxQueuedMessages, sessionHistoryEvents } = input;
      // Admitted and past any retry's resume point: the next run starts idle, from what it carries.
      await continueAsNew({
        ...{ missionId, modelTaskQueue, toolTaskQueue, maxQueuedMessages, sessionHistoryEvents },
        continued: {
          ...at,
          metrics: { turns, toolCalls, inputTokens, outputTokens, costUsd },
          modelCalls: opts.modelCalls(),
          approvalWaitMs: opts.approvalWaitMs(),
          events: cursor,
          messages: messages.queued(),
          messageIds: messages.acceptedIds(),
        },
      });
    },
  };
}
