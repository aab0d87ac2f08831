import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { storeOptions } from './activity-options.ts';
import { waitForAdmission } from './admission-wait.ts';
import { decideToolUpdate } from '../contracts/approvals.ts';
import { eventsQuery, type MissionSinks } from '../contracts/events.ts';
import {
  admitSignal,
  cancelToolUpdate,
  stateQuery,
  type MissionInput,
  type MissionPhase,
  type MissionResult,
  type ModelTurnResult,
  type ToolOutcome,
} from '../contracts/mission.ts';
import { createEventLog } from './event-log.ts';
import { advanceCursor } from './events-cursor.ts';
import { describeFailure, endsMission, failurePhase } from './failures.ts';
import { nextCallExceedsBudget } from './budget.ts';
import { createToolCalls } from './tool-calls.ts';
import { createApprovals } from './approvals.ts';
import { createMessages } from './messages.ts';
import { createModelTurns } from './model-turns.ts';
import { DEFAULT_MAX_QUEUED_MESSAGES, sendMessageUpdate } from '../contracts/messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);
const { progress: progressSink } = proxySinks<MissionSinks>();

/** One skill mission: prepare, the model/tool turn loop, complete; failure or cancellation recorded durably. */
export async function missionWorkflow(input: MissionInput): Promise<MissionResult> {
  // Only a mission started over a running-mission limit waits for a slot.
  const queued = input.queued === true;
  // The sink hands each event to the worker, which wakes the API's relay or pushes them once an activity proves them
  // recorded; sinks write no history.
  const eventLog = createEventLog(queued ? 'queued' : 'running', (logged, ended) => {
    for (const event of logged) progressSink.changed(event, advanceCursor(event).digest, ended && event === logged.at(-1));
  });
  const approvals = createApprovals({ missionId: input.missionId, eventLog });
  const tools = createToolCalls({
    missionId: input.missionId,
    modelTaskQueue: input.modelTaskQueue,
    eventLog,
    toolTaskQueue: input.toolTaskQueue,
    approvals,
  });
  const messages = createMessages({
    eventLog,
    maxQueued: input.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES,
    interrupt: (cancelTools) => {
      model.interrupt();
      if (cancelTools) tools.cancelRunning();
    },
  });
  // Handlers first, before any await, so early queries, updates and signals are served.
  setHandler(eventsQuery, (afterSeq) => eventLog.page(afterSeq));
  setHandler(stateQuery, () => eventLog.state());
  setHandler(cancelToolUpdate, (toolUseId) => tools.cancel(toolUseId), { validator: (toolUseId) => tools.validateCancel(toolUseId) });
  let admitted = false;
  setHandler(admitSignal, () => void (admitted = true));
  setHandler(sendMessageUpdate, (message) => messages.accept(message), { validator: (message) => messages.validate(message) });
  setHandler(decideToolUpdate, (toolUseId, decision) => approvals.decide(toolUseId, decision), {
    validator: (toolUseId, decision) => approvals.validateDecision(toolUseId, decision),
  });
  const resume = input.resume;
  // A retry says where it resumed on its first event (workflow memory only: no command changes).
  const running = {
    type: 'status',
    status: 'running',
    ...(resume ? { resumed: { retryOf: resume.retryOf, turn: resume.turn } } : {}),
  } as const;
  eventLog.statusChanged(queued ? { type: 'status', status: 'queued' } : running);

  const started = Date.now();
  // A retry's budgets count what the carried-over turns spent.
  const metrics = {
    ...{ turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0, costUsd: 0 },
    ...(resume ? { ...resume.spent, turns: resume.turn - 1 } : {}),
  };
  let phase: MissionPhase = 'prepare';
  const model = createModelTurns({ ...input, messages, metrics, starting: () => void (phase = 'model') });

  async function loop(): Promise<MissionResult> {
    if (queued) {
      phase = 'queued';
      await waitForAdmission(input.missionId, () => admitted);
      eventLog.statusChanged(running);
      phase = 'prepare';
    }
    const plan = await store.prepareMission.executeWithOptions({ summary: 'prepare mission' }, [{ missionId: input.missionId }]);
    let previous: ToolOutcome[] = resume?.previous ?? [];
    const finish = (reply: ModelTurnResult, stoppedBy: MissionResult['stoppedBy']): MissionResult => ({
      text: reply.text,
      canvasSpecIds: [],
      // The wait for approvals is part of the elapsed time; reported apart so the run's own time can be read too.
      metrics: { ...metrics, elapsedMs: Date.now() - started, ...(approvals.waitMs() > 0 ? { approvalWaitMs: approvals.waitMs() } : {}) },
      stoppedBy,
    });
    for (let turn = resume?.turn ?? 1; turn <= plan.maxTurns; turn++) {
      eventLog.turn(turn);
      setCurrentDetails(`**turn ${turn}** of ${plan.maxTurns} · ${metrics.toolCalls} tool calls so far`);
      const reply = await model.turn(plan, turn, previous);
      if (reply.stopReason === 'tool_use' && reply.toolUses.length > 0) {
        // Totals come from workflow state, rebuilt on replay: the budget holds across worker restarts.
        const totals = { tokens: metrics.inputTokens + metrics.outputTokens, costUsd: metrics.costUsd };
        const last = { tokens: reply.inputTokens + reply.outputTokens, costUsd: reply.costUsd };
        if (nextCallExceedsBudget(plan.budget, totals, last)) {
          // The tools just asked for are not run: the final answer takes the place of the next turn.
          return finish(await model.final(plan, turn + 1, [], 'budget'), 'budget');
        }
        phase = 'tool';
        metrics.toolCalls += reply.toolUses.length;
        previous = await tools.runTurn(plan, reply.toolUses, turn);
        continue;
      }
      // An answer with messages waiting is a turn boundary like any other: the next turn carries them.
      if (messages.waiting()) {
        previous = [];
        continue;
      }
      // Nothing waits, and nothing can be sent from now on: the decision and the refusal are one step.
      messages.end();
      // max_tokens ends the mission with the text so far, marked as such: a cut-off tool call is never run.
      return finish(reply, reply.stopReason === 'max_tokens' ? 'max_tokens' : 'answer');
    }
    return finish(await model.final(plan, plan.maxTurns + 1, previous, 'turn_budget'), 'turn_budget');
  }

  try {
    const answer = await loop();
    phase = 'complete';
    // Not cancellable: a cancel arriving now would leave the completion writing on after the run closed CANCELLED.
    // The completion stores the final events it will be followed by, so the API can end a closed mission's stream.
    const finalEvents = eventLog.finalEvents('completed');
    const gathered = await CancellationScope.nonCancellable(() =>
      store.completeMission.executeWithOptions({ summary: 'complete mission' }, [
        { missionId: input.missionId, result: answer, finalEvents },
      ]),
    );
    // The canvas ids and follow-ups of the mission's embeds.
    const result: MissionResult = { ...answer, ...gathered };
    eventLog.finish('completed', { result }, finalEvents);
    return result;
  } catch (err) {
    // A bug in this code fails the workflow task (retried after a fix and redeploy), not the mission.
    if (!endsMission(err)) throw err;
    messages.end();
    const cancelled = isCancellation(err);
    if (!cancelled) phase = failurePhase(err, phase);
    const error = { phase, message: cancelled ? 'mission cancelled' : describeFailure(err) };
    const status = cancelled ? 'cancelled' : 'failed';
    // The root scope may be cancelled: recording the outcome must not be.
    const finalEvents = await CancellationScope.nonCancellable(async () => {
      await tools.endRunning(cancelled ? 'cancelled' : 'error', cancelled ? undefined : 'the mission failed');
      const final = eventLog.finalEvents(status, error);
      await store.failMission.executeWithOptions({ summary: cancelled ? 'record cancellation' : 'record failure' }, [
        { missionId: input.missionId, status, error, finalEvents: final },
      ]);
      return final;
    });
    eventLog.finish(status, { error }, finalEvents);
    if (cancelled) throw err; // rethrown so the run closes as CANCELLED
    throw ApplicationFailure.nonRetryable(`${phase} failed: ${error.message}`, 'MissionFailed');
  }
}
