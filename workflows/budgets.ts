import { ApplicationFailure, condition, proxyActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { MISSION_ENDED } from '../contracts/messages.ts';
import type { MissionBudget, MissionPlan } from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';
import { retakeSlot, type Admission } from './admission-wait.ts';
import { nextCallExceedsBudget, type Usage } from './budget.ts';
import type { EventLog } from './event-log.ts';
import type { Messages } from './messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/**
 * The mission's budgets, which the `changeBudget` update may change while it runs, and the pause of a mission whose
 * policy is `pause`: when its next call would pass the budget it waits `paused` (its slot freed, `budget.reached`
 * delivered) until a change lets that call fit, or the plan's pause timeout passes; then it takes a slot again.
 */
export function createBudgets(opts: { missionId: string; eventLog: EventLog; messages: Messages; admission: Admission }) {
  const { missionId, eventLog, admission } = opts;
  // Changes that came before the plan did (a queued or preparing mission): the plan takes them when it comes.
  const early: MissionBudget = {};
  let plan: MissionPlan | undefined;

  return {
    /** The plan is known (prepared, or carried into a session's later run): earlier changes apply to it. */
    attach(p: MissionPlan): void {
      plan = p;
      Object.assign(p.budget, early);
    },
    /** The update's validator: refuses an ended mission or a budget that is not a positive number, writing no history. */
    validateChange(change: MissionBudget): void {
      if (opts.messages.ended()) throw ApplicationFailure.create({ type: MISSION_ENDED, message: 'the mission has already ended' });
      for (const v of [change.maxTokens, change.maxCostUsd])
        if (v !== undefined && !(typeof v === 'number' && v > 0))
          throw ApplicationFailure.create({ message: 'a budget is a positive number' });
    },
    /** The budgets from now on (a field left out stays); answers those in force. */
    change(change: MissionBudget): MissionBudget {
      const target = plan?.budget ?? early;
      if (change.maxTokens !== undefined) target.maxTokens = change.maxTokens;
      if (change.maxCostUsd !== undefined) target.maxCostUsd = change.maxCostUsd;
      return { ...target };
    },
    /**
     * The next call after `turn` would pass the budget. With the `pause` policy: waits `paused` and answers true once a
     * change lets it fit (the mission goes on), false when the timeout passed; without it, false at once. Either way
     * the caller makes the forced final call on false.
     */
    async pause(p: MissionPlan, turn: number, totals: Usage, last: Usage): Promise<boolean> {
      if (!p.budgetPause) return false;
      await store.pauseMission.executeWithOptions({ summary: `paused at the budget after turn ${turn}` }, [{ missionId, turn }]);
      eventLog.emit({ type: 'budget_reached', turn, budget: { ...p.budget }, spent: totals });
      eventLog.statusChanged({ type: 'status', status: 'paused' });
      const fits = await condition(() => !nextCallExceedsBudget(p.budget, totals, last), p.budgetPause.timeoutS * 1000);
      await retakeSlot(missionId, 'paused', admission, () => eventLog.statusChanged({ type: 'status', status: 'queued' }));
      eventLog.statusChanged({ type: 'status', status: 'running' });
      return fits;
    },
  };
}
