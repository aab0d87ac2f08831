import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { storeOptions } from './activity-options.ts';
import { waitForAdmission } from './admission-wait.ts';
import { decideToolUpdate } from '../contracts/approvals.ts';
import { eventsQuery } from '../contracts/events.ts';
import {
  admitSignal,
  cancelToolUpdate,
  stateQuery,
  type MissionInput,
  type MissionPhase,
  type MissionResult,
  type MissionPlan,
} from '../contracts/mission.ts';
import { createEventLog } from './event-log.ts';
import { advanceCursor, hold, resumeCursor } from './events-cursor.ts';
import { describeFailure, endsMission, failurePhase } from './failures.ts';
import { createToolCalls } from './tool-calls.ts';
import { delegationBudget } from './delegate-call.ts';
import { createApprovals } from './approvals.ts';
import { createClientCalls } from './client-call.ts';
import { toolResultUpdate } from '../contracts/client-tools.ts';
import { createMessages } from './messages.ts';
import { createModelTurns } from './model-turns.ts';
import { createExchanges, type ExchangeStart } from './exchange.ts';
import { createSessionChain } from './session-chain.ts';
import { createSession } from './sessions.ts';
import { createBudgets } from './budgets.ts';
import { changeBudgetUpdate } from '../contracts/budgets.ts';
import { DEFAULT_MAX_QUEUED_MESSAGES, closeSessionUpdate, sendMessageUpdate } from '../contracts/messages.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/** One skill mission: prepare, the model/tool turn loop, complete; failure or cancellation recorded durably. */
export async function missionWorkflow(input: MissionInput): Promise<MissionResult> {
  // Only a mission started over a running-mission limit waits for a slot.
  const queued = input.queued === true;
  // A session's later run: it starts idle, from what the run before carried (session-chain.ts).
  const carried = input.continued;
  if (carried) resumeCursor(carried.events);
  // The activation's one sink call hands its events to the worker, which wakes the API's relay or pushes them once an
  // activity proves them recorded; sinks write no history.
  const eventLog = createEventLog(
    carried ? 'idle' : queued ? 'queued' : 'running',
    (logged, ended) => {
      for (const event of logged) hold(event, advanceCursor(event).digest, ended && event === logged.at(-1));
    },
    carried && { upTo: carried.events.upTo, turn: carried.metrics.turns, exchanges: carried.exchange },
  );
  const resume = input.resume;
  // A retry's budgets count what the carried-over turns spent.
  const metrics = {
    ...{ turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0, costUsd: 0 },
    ...(resume ? { ...resume.spent, turns: resume.turn - 1 } : {}),
    ...carried?.metrics,
  };
  const approvals = createApprovals({ missionId: input.missionId, eventLog, waitedBefore: carried?.approvalWaitMs });
  const clientCalls = createClientCalls({ eventLog });
  const tools = createToolCalls({
    clientCalls,
    missionId: input.missionId,
    modelTaskQueue: input.modelTaskQueue,
    eventLog,
    toolTaskQueue: input.toolTaskQueue,
    approvals,
    budget: delegationBudget(metrics),
  });
  const messages = createMessages({
    eventLog,
    maxQueued: input.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES,
    interrupt: (cancelTools) => [...model.interrupt(), ...(cancelTools ? tools.cancelRunning() : [])],
    carried: carried?.messages,
    earlierIds: carried?.messageIds,
  });
  // The admit signal's mark: a queued start waits for it, and so does a session a message wakes while no slot is free.
  const admission = { admitted: false };
  const session = createSession({ missionId: input.missionId, eventLog, messages, admission });
  const budgets = createBudgets({ missionId: input.missionId, eventLog, messages, admission });
  let plan: MissionPlan | undefined = carried?.plan;
  // Handlers first, before any await, so early queries, updates and signals are served.
  setHandler(eventsQuery, (afterSeq) => eventLog.page(afterSeq));
  setHandler(stateQuery, () => eventLog.state());
  setHandler(cancelToolUpdate, (toolUseId) => tools.cancel(toolUseId), { validator: (toolUseId) => tools.validateCancel(toolUseId) });
  setHandler(toolResultUpdate, (toolUseId, result) => clientCalls.deliver(toolUseId, result), {
    validator: (toolUseId, result) => clientCalls.validate(toolUseId, result),
  });
  setHandler(admitSignal, () => void (admission.admitted = true));
  setHandler(sendMessageUpdate, (message) => messages.accept(message), { validator: (message) => messages.validate(message) });
  setHandler(changeBudgetUpdate, (change) => budgets.change(change), { validator: (change) => budgets.validateChange(change) });
  setHandler(closeSessionUpdate, () => session.close(), { validator: () => session.validateClose(plan) });
  setHandler(decideToolUpdate, (toolUseId, decision) => approvals.decide(toolUseId, decision), {
    validator: (toolUseId, decision) => approvals.validateDecision(toolUseId, decision),
  });
  // A retry says where it resumed on its first event (workflow memory only: no command changes).
  const running = {
    type: 'status',
    status: 'running',
    ...(resume ? { resumed: { retryOf: resume.retryOf, turn: resume.turn } } : {}),
  } as const;
  if (!carried) eventLog.statusChanged(queued ? { type: 'status', status: 'queued' } : running);

  const started = Date.now();
  let phase: MissionPhase = carried ? 'model' : 'prepare';
  // The exchange in progress (a session's are numbered from 1; a mission is its one exchange).
  let current = (carried?.exchange ?? 0) + 1;
  const model = createModelTurns({
    ...{ ...input, messages, eventLog, metrics, callsBefore: carried?.modelCalls, exchange: () => current },
    starting: () => void (phase = 'model'),
  });
  const chain = createSessionChain({
    ...{ input, eventLog, messages, metrics, modelCalls: model.calls },
    ...{ approvalWaitMs: () => approvals.waitMs(), closing: () => session.closing() },
  });

  const runExchange = createExchanges({
    ...{ eventLog, messages, model, tools, metrics, budgets },
    toolPhase: () => void (phase = 'tool'),
    approvalWaitMs: () => approvals.waitMs(),
  });
  /** The mission's exchanges: one, or a session's, each started by a message. The last one's result, and its first turn. */
  async function loop(): Promise<{ answer: MissionResult; fromTurn: number }> {
    const first = resume?.turn ?? 1;
    // The first exchange counts from nothing (a retry's carried turns included); each later one from its own start.
    let start: ExchangeStart = { turn: first, previous: resume?.previous ?? [], lastTurn: 0 };
    let since = { metrics: { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, elapsedMs: 0, costUsd: 0 }, at: started };
    const nextExchange = (p: MissionPlan) => {
      // Each exchange has the turn limit; the transcript goes on where the last one stopped.
      const turn = metrics.turns + 1;
      start = { turn, previous: [], lastTurn: turn + p.maxTurns - 1 };
      since = { metrics: { ...metrics }, at: Date.now() };
    };
    if (carried) {
      if (!(await session.next(carried.exchange, carried.idleUntil))) return { answer: carried.result, fromTurn: carried.fromTurn };
      nextExchange(carried.plan);
    } else {
      if (queued) {
        phase = 'queued';
        await waitForAdmission(input.missionId, admission);
        eventLog.statusChanged(running);
        phase = 'prepare';
      }
      plan = await store.prepareMission.executeWithOptions({ summary: 'prepare mission' }, [{ missionId: input.missionId }]);
      start.lastTurn = plan.maxTurns;
    }
    const p = plan!;
    budgets.attach(p);
    for (; ; current++) {
      const answer = await runExchange(p, start, since);
      if (!p.session) return { answer, fromTurn: first };
      const result = await session.answered(current, start.turn, answer);
      const idleUntil = Date.now() + p.session.idleTtlS * 1000;
      await chain.continueIfDue({ plan: p, exchange: current, fromTurn: start.turn, result, idleUntil });
      if (!(await session.next(current, idleUntil))) return { answer: result, fromTurn: start.turn };
      nextExchange(p);
    }
  }

  try {
    const { answer, fromTurn } = await loop();
    phase = 'complete';
    // Not cancellable: a cancel arriving now would leave the completion writing on after the run closed CANCELLED.
    // The completion stores the final events it will be followed by, so the API can end a closed mission's stream.
    const finalEvents = eventLog.finalEvents('completed');
    const gathered = await CancellationScope.nonCancellable(() =>
      store.completeMission.executeWithOptions({ summary: 'complete mission' }, [
        { missionId: input.missionId, result: answer, finalEvents, ...(plan?.session ? { fromTurn } : {}) },
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
