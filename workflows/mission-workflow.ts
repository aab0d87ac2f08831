import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { MissionActivities } from '../activities/index.ts';
import {
  StatusSearchAttribute,
  cancelToolSignal,
  eventsQuery,
  stateQuery,
  type MissionInput,
  type MissionPlan,
  type MissionResult,
  type ModelTurnResult,
  type ToolOutcome,
  type ToolUse,
} from './definitions.ts';
import { createMissionProgress } from './mission-progress.ts';
import { describeFailure, failurePhase } from './failures.ts';
import { nextCallExceedsBudget } from './budget.ts';

const store = proxyActivities<MissionActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
});

/** One skill mission: prepare, the model/tool turn loop, complete; failure or cancellation recorded durably. */
export async function missionWorkflow(input: MissionInput): Promise<MissionResult> {
  const progress = createMissionProgress();
  const toolScopes = new Map<string, CancellationScope>();
  const cancelledTools = new Set<string>();
  // Handlers first, before any await, so early queries and signals are served.
  setHandler(eventsQuery, (afterSeq) => progress.page(afterSeq));
  setHandler(stateQuery, () => progress.state());
  setHandler(cancelToolSignal, (toolUseId) => {
    const scope = toolScopes.get(toolUseId);
    // A cancel can arrive before the tool's activity is scheduled: remember it (once) so that tool never runs.
    if (scope) scope.cancel();
    else cancelledTools.add(toolUseId);
  });
  progress.emit({ type: 'status', status: 'running' });

  const { callModel } = proxyActivities<MissionActivities>({
    taskQueue: input.modelTaskQueue,
    startToCloseTimeout: '190s', // the activity aborts its HTTP call at 180 s; this is the outer guard
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const started = Date.now();
  const metrics = { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0, costUsd: 0 };
  let phase = 'prepare';

  async function modelTurn(
    plan: MissionPlan,
    turn: number,
    previous: ToolOutcome[],
    finalReason?: 'turn_budget' | 'budget',
  ): Promise<ModelTurnResult> {
    phase = 'model';
    const final = finalReason !== undefined;
    const reply = await callModel.executeWithOptions({ summary: `model ${plan.tier} · turn ${turn}${final ? ' (final)' : ''}` }, [
      { missionId: input.missionId, turn, tier: plan.tier, previous, final, ...(finalReason ? { finalReason } : {}) },
    ]);
    metrics.turns = turn;
    metrics.inputTokens += reply.inputTokens;
    metrics.outputTokens += reply.outputTokens;
    // Results recorded before costs existed carry none.
    metrics.costUsd += reply.costUsd ?? 0;
    return reply;
  }

  async function runTool(plan: MissionPlan, toolUse: ToolUse, turn: number): Promise<ToolOutcome> {
    const spec = plan.tools.find((t) => t.modelName === toolUse.name);
    const started = Date.now();
    progress.toolStarted(toolUse.id, spec?.qualifiedName ?? toolUse.name, turn);
    metrics.toolCalls += 1;
    const end = (outcome: ToolOutcome): ToolOutcome => {
      progress.toolEnded(toolUse.id, outcome.status, Date.now() - started, outcome.error);
      return outcome;
    };
    if (!spec) return end({ toolUseId: toolUse.id, status: 'error', error: `unknown tool ${toolUse.name}` });
    // Consumed on use: some OpenAI-compatible servers reuse tool-call ids across turns.
    if (cancelledTools.delete(toolUse.id)) return end({ toolUseId: toolUse.id, status: 'cancelled' });
    const { runTool: run } = proxyActivities<MissionActivities>({
      startToCloseTimeout: `${spec.timeoutS + 5}s`,
      heartbeatTimeout: '4s', // heartbeats carry cancellation: this bounds how fast a cancel reaches the tool
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: spec.retries + 1 },
    });
    const scope = new CancellationScope();
    toolScopes.set(toolUse.id, scope);
    try {
      const result = await scope.run(() =>
        run.executeWithOptions({ summary: `tool ${spec.qualifiedName}`, activityId: `tool-${turn}-${toolUse.id}` }, [
          { missionId: input.missionId, toolUse, qualifiedName: spec.qualifiedName, timeoutS: spec.timeoutS, turn },
        ]),
      );
      return end({ toolUseId: toolUse.id, status: result.status, ...(result.error ? { error: result.error } : {}) });
    } catch (err) {
      // Only this tool's scope was cancelled: the mission goes on. A root cancellation propagates.
      if (isCancellation(err) && !CancellationScope.current().consideredCancelled) {
        return end({ toolUseId: toolUse.id, status: 'cancelled' });
      }
      if (isCancellation(err)) throw err;
      return end({ toolUseId: toolUse.id, status: 'error', error: describeFailure(err) });
    } finally {
      toolScopes.delete(toolUse.id);
    }
  }

  async function loop(): Promise<MissionResult> {
    const plan = await store.prepareMission.executeWithOptions({ summary: 'prepare mission' }, [{ missionId: input.missionId }]);
    let previous: ToolOutcome[] = [];
    const finish = (reply: ModelTurnResult, stoppedBy: MissionResult['stoppedBy']): MissionResult => ({
      text: reply.text,
      canvasSpecIds: [],
      metrics: { ...metrics, elapsedMs: Date.now() - started },
      stoppedBy,
    });
    for (let turn = 1; turn <= plan.maxTurns; turn++) {
      progress.turn(turn);
      setCurrentDetails(`**turn ${turn}** of ${plan.maxTurns} · ${metrics.toolCalls} tool calls so far`);
      const reply = await modelTurn(plan, turn, previous);
      if (reply.stopReason === 'tool_use' && reply.toolUses.length > 0) {
        // Totals come from workflow state, rebuilt on replay: the budget holds across worker restarts.
        const totals = { tokens: metrics.inputTokens + metrics.outputTokens, costUsd: metrics.costUsd };
        const last = { tokens: reply.inputTokens + reply.outputTokens, costUsd: reply.costUsd ?? 0 };
        if (nextCallExceedsBudget(plan.budget, totals, last)) {
          // The tools just asked for are not run: the final answer takes the place of the next turn.
          return finish(await modelTurn(plan, turn + 1, [], 'budget'), 'budget');
        }
        phase = 'tool';
        previous = await Promise.all(reply.toolUses.map((tu) => runTool(plan, tu, turn)));
        continue;
      }
      // max_tokens ends the mission with the text so far, marked as such: a cut-off tool call is never run.
      return finish(reply, reply.stopReason === 'max_tokens' ? 'max_tokens' : 'answer');
    }
    return finish(await modelTurn(plan, plan.maxTurns + 1, previous, 'turn_budget'), 'turn_budget');
  }

  try {
    const result = await loop();
    phase = 'complete';
    // Not cancellable: a cancel arriving now would leave the completion writing on after the run closed CANCELLED.
    await CancellationScope.nonCancellable(() =>
      store.completeMission.executeWithOptions({ summary: 'complete mission' }, [{ missionId: input.missionId, result }]),
    );
    upsertSearchAttributes([{ key: StatusSearchAttribute, value: 'completed' }]);
    progress.finish('completed', { result });
    return result;
  } catch (err) {
    const cancelled = isCancellation(err);
    if (!cancelled) phase = failurePhase(err, phase);
    const error = { phase, message: cancelled ? 'mission cancelled' : describeFailure(err) };
    // The root scope may be cancelled: recording the outcome must not be.
    await CancellationScope.nonCancellable(async () => {
      await store.failMission.executeWithOptions({ summary: cancelled ? 'record cancellation' : 'record failure' }, [
        { missionId: input.missionId, status: cancelled ? 'cancelled' : 'failed', error },
      ]);
      upsertSearchAttributes([{ key: StatusSearchAttribute, value: cancelled ? 'cancelled' : 'failed' }]);
    });
    progress.finish(cancelled ? 'cancelled' : 'failed', { error });
    if (cancelled) throw err; // rethrown so the run closes as CANCELLED
    throw ApplicationFailure.nonRetryable(`${phase} failed: ${error.message}`, 'MissionFailed');
  }
}
