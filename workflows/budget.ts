import type { MissionBudget } from '../contracts/mission.ts';

/** Model usage in the two units a budget can limit. */
export type Usage = { tokens: number; costUsd: number };

/**
 * Whether the next model call would take the running totals past the budget. The next call is estimated as the
 * last one's size: its prompt holds everything the last one read plus what it wrote, so this is a lower bound.
 */
export function nextCallExceedsBudget(budget: MissionBudget | undefined, totals: Usage, last: Usage): boolean {
  if (!budget) return false;
  if (budget.maxTokens !== undefined && totals.tokens + last.tokens > budget.maxTokens) return true;
  if (budget.maxCostUsd !== undefined && totals.costUsd + last.costUsd > budget.maxCostUsd) return true;
  return false;
}
