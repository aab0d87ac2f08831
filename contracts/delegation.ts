import type { MissionBudget, MissionEndStatus, ToolCallResult } from './mission.ts';

/**
 * Sub-missions: the `delegate` system tool runs another of the owner's skills as a child mission, a child workflow of
 * the calling mission (workflows/delegate-call.ts). Its vocabulary and the activities the call proxies.
 */

/** The system tool; offered only to a skill that lists `metadata.cadenza-delegates`. */
export const DELEGATE = 'delegate';
/** MAX_DELEGATION_DEPTH's default: a root mission is depth 0, its children 1, and so on. */
export const DEFAULT_MAX_DELEGATION_DEPTH = 3;

/** One delegate call and the child mission it starts (its id chosen by the workflow, so a retry finds the same row). */
export type DelegationIds = { missionId: string; turn: number; toolUseId: string; embedId: string; childId: string };

/** What the model may ask for: the target skill, its objective, and limits carved from the caller's. */
export type DelegationRequest = { skill: string; objective: string; maxCostUsd?: number; maxTurns?: number };

/** What the caller's budget has left when the call starts (absent: that budget is not set). */
export type RemainingBudget = MissionBudget;

/** The child mission, recorded and ready to start; or why not (an error result the model sees). */
export type DelegationPreparation = { ok: true; skill: string; skillVersion: number; userKey: string } | { ok: false; error: string };

/** What the child's tree spent, counted into the caller's totals when the call ends. */
export type DelegationSpent = { inputTokens: number; outputTokens: number; costUsd: number };

/** How the call ended: the tool result (absent when the call was cancelled: the workflow ends it), the child's status, its spend. */
export type DelegationEnd = { result?: ToolCallResult; status?: MissionEndStatus; spent: DelegationSpent };

/** The delegation's activities (missions/delegation-activities.ts), on the missions task queue. */
export interface DelegationActivities {
  /** Checks the request (the skill's list, the owner's active skill, the depth, the budget) and records the child's row. */
  prepareDelegation(input: DelegationIds & { input: Record<string, unknown>; remaining: RemainingBudget }): Promise<DelegationPreparation>;
  /**
   * The call is over: the child's answer (or why it failed) stored as the call's output unless it was `cancelled`; a
   * child row its workflow never ended is settled; answers what the child's tree spent. `error`: why the call failed
   * when no child row says it (the child never started).
   */
  finishDelegation(input: DelegationIds & { cancelled: boolean; error?: string }): Promise<DelegationEnd>;
}
