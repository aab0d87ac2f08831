import { defineUpdate } from '@temporalio/workflow';
import type { MissionBudget } from './mission.ts';

/**
 * `PATCH /missions/:id {maxTokens?, maxCostUsd?}`: the mission's budgets from now on (a field left out stays as it
 * was). A mission `paused` at its budget goes on once the next call fits. Answers the budgets in force; an ended
 * mission is refused with MISSION_ENDED (contracts/messages.ts), as a message is.
 */
export const changeBudgetUpdate = defineUpdate<MissionBudget, [change: MissionBudget]>('changeBudget');
