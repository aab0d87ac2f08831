import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import { derivedId } from '../contracts/derived-id.ts';
import { DELEGATE, type DelegationActivities, type DelegationSpent, type RemainingBudget } from '../contracts/delegation.ts';
import {
  MISSION_WORKFLOW,
  SkillSearchAttribute,
  SkillVersionSearchAttribute,
  StatusSearchAttribute,
  UserSearchAttribute,
  missionWorkflowId,
  type MissionInput,
  type MissionMetrics,
  type MissionPlan,
  type MissionResult,
  type ToolCallResult,
  type ToolUse,
} from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';
import type { EventLog } from './event-log.ts';
import { describeFailure } from './failures.ts';

const store = proxyActivities<DelegationActivities>(storeOptions);

/** The caller's budget as a delegate call sees it: what is left now, and the child's spend counted in when it ends. */
export type DelegationBudget = { remaining(plan: MissionPlan): RemainingBudget; spend(spent: DelegationSpent): void };

/** One of `calls` delegate calls of a turn gets an even share of what is left: together they cannot pass it. */
function shareOf(remaining: RemainingBudget, calls: number): RemainingBudget {
  return {
    ...(remaining.maxCostUsd !== undefined ? { maxCostUsd: remaining.maxCostUsd / calls } : {}),
    ...(remaining.maxTokens !== undefined ? { maxTokens: remaining.maxTokens / calls } : {}),
  };
}

/** The budget of a mission whose running totals are `metrics`: a child's spend is added to them, so budgets count it. */
export function delegationBudget(metrics: Pick<MissionMetrics, 'inputTokens' | 'outputTokens' | 'costUsd'>): DelegationBudget {
  return {
    remaining: ({ budget }) => ({
      ...(budget.maxCostUsd !== undefined ? { maxCostUsd: budget.maxCostUsd - metrics.costUsd } : {}),
      ...(budget.maxTokens !== undefined ? { maxTokens: budget.maxTokens - metrics.inputTokens - metrics.outputTokens } : {}),
    }),
    spend(spent) {
      metrics.inputTokens += spent.inputTokens;
      metrics.outputTokens += spent.outputTokens;
      metrics.costUsd += spent.costUsd;
    },
  };
}

/**
 * `delegate` calls of a mission: each runs the target skill as a child mission, a child workflow whose id is the child
 * mission's, started inside the call's cancellation scope (the caller runs `run` in it): cancelling the call or the
 * mission cancels the child, and the call ends once the child has recorded its end. The child's answer is the result.
 */
export function createDelegateCalls(opts: {
  missionId: string;
  modelTaskQueue: string;
  toolTaskQueue: string;
  eventLog: EventLog;
  budget: DelegationBudget;
}) {
  const { missionId, eventLog } = opts;
  return {
    handles: (qualifiedName: string): boolean => qualifiedName === `system.${DELEGATE}`,
    /** `calls`: how many delegate calls the turn makes in parallel; each child's budget is carved from its share. */
    async run(plan: MissionPlan, toolUse: ToolUse, turn: number, embedId: string, calls: number): Promise<ToolCallResult> {
      // The child's id, the same on every replay: a retried preparation finds the row it wrote.
      // The child's id follows from the call alone (a replay with other interceptors draws other random numbers).
      const childId = derivedId(`delegate/${missionId}/${turn}/${toolUse.id}`);
      const ids = { missionId, turn, toolUseId: toolUse.id, embedId, childId };
      let started: { skill: string } | undefined;
      let cancelled: unknown;
      let error: string | undefined;
      try {
        const prepared = await store.prepareDelegation.executeWithOptions({ summary: `delegate: check ${String(toolUse.input.skill)}` }, [
          { ...ids, input: toolUse.input, remaining: shareOf(opts.budget.remaining(plan), Math.max(1, calls)) },
        ]);
        if (!prepared.ok) error = prepared.error;
        else {
          started = { skill: prepared.skill };
          eventLog.emit({ type: 'delegate', toolUseId: toolUse.id, childId: ids.childId, skill: prepared.skill, status: 'started' });
          const input: MissionInput = { missionId: ids.childId, modelTaskQueue: opts.modelTaskQueue, toolTaskQueue: opts.toolTaskQueue };
          await executeChild<(input: MissionInput) => Promise<MissionResult>>(MISSION_WORKFLOW, {
            workflowId: missionWorkflowId(ids.childId),
            args: [input],
            // The call's cancel waits for the child to record its cancellation, so its row is final when the call ends.
            cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
            // Should the parent close some other way (terminated, timed out), the child is asked to cancel, not killed.
            parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
            typedSearchAttributes: [
              { key: SkillSearchAttribute, value: prepared.skill },
              { key: UserSearchAttribute, value: prepared.userKey },
              { key: StatusSearchAttribute, value: 'running' },
              { key: SkillVersionSearchAttribute, value: String(prepared.skillVersion) },
            ],
            staticSummary: `${prepared.skill} v${prepared.skillVersion} · sub-mission of ${missionId}`,
          });
        }
      } catch (err) {
        if (isCancellation(err)) cancelled = err;
        // The child failed (its row says how) or could not be started.
        else error = describeFailure(err);
      }
      // Not cancellable: a cancelled call still counts what its child spent and settles the child's row.
      const end = await CancellationScope.nonCancellable(() =>
        store.finishDelegation.executeWithOptions({ summary: 'delegate: the sub-mission ended' }, [
          { ...ids, cancelled: cancelled !== undefined, ...(error ? { error } : {}) },
        ]),
      );
      opts.budget.spend(end.spent);
      if (started && end.status)
        eventLog.emit({ type: 'delegate', toolUseId: toolUse.id, childId: ids.childId, skill: started.skill, status: end.status });
      if (cancelled !== undefined) throw cancelled;
      return end.result!;
    },
  };
}
