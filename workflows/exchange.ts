import { setCurrentDetails } from '@temporalio/workflow';
import type { MissionMetrics, MissionPlan, MissionResult, ModelTurnResult, ToolOutcome } from '../contracts/mission.ts';
import { nextCallExceedsBudget } from './budget.ts';
import type { EventLog } from './event-log.ts';
import type { Messages } from './messages.ts';
import type { createModelTurns } from './model-turns.ts';
import type { createToolCalls } from './tool-calls.ts';
import type { createBudgets } from './budgets.ts';
import { createTypedOutput } from './typed-output.ts';

/** Where an exchange starts: its first turn, the tool outcomes that turn's call reports, and its last regular turn. */
export type ExchangeStart = { turn: number; previous: ToolOutcome[]; lastTurn: number };

/**
 * The turn loop of one exchange: model call, tool calls, again, until the model answers with no message waiting, the
 * turn limit or the budget forces a final call. Its result's metrics count from `since` (a session's later exchanges
 * count their own; the first counts everything before it, a retry's carried turns included).
 */
export function createExchanges(opts: {
  eventLog: EventLog;
  messages: Messages;
  model: ReturnType<typeof createModelTurns>;
  tools: ReturnType<typeof createToolCalls>;
  metrics: Omit<MissionMetrics, 'approvalWaitMs'>;
  budgets: ReturnType<typeof createBudgets>;
  toolPhase: () => void;
  approvalWaitMs: () => number;
}) {
  const { eventLog, messages, model, tools, metrics } = opts;
  const typed = createTypedOutput({ model, eventLog });

  return async function runExchange(
    plan: MissionPlan,
    start: ExchangeStart,
    since: { metrics: Omit<MissionMetrics, 'approvalWaitMs'>; at: number },
  ): Promise<MissionResult> {
    // A mission that answers ends, and takes no message from then on; a session goes idle and takes the next one.
    const ending = () => (plan.session ? undefined : messages.end());
    const finish = (reply: ModelTurnResult, stoppedBy: MissionResult['stoppedBy']): MissionResult => {
      const waited = opts.approvalWaitMs();
      const own = (k: 'toolCalls' | 'inputTokens' | 'outputTokens' | 'costUsd') => metrics[k] - since.metrics[k];
      const cached = (k: 'cacheReadTokens' | 'cacheCreationTokens') => {
        const n = (metrics[k] ?? 0) - (since.metrics[k] ?? 0);
        return n > 0 ? { [k]: n } : {};
      };
      return {
        text: reply.text,
        ...(reply.output?.ok ? { output: reply.output.value } : {}),
        canvasSpecIds: [],
        metrics: {
          ...{ turns: metrics.turns - since.metrics.turns, toolCalls: own('toolCalls'), inputTokens: own('inputTokens') },
          ...{ outputTokens: own('outputTokens'), costUsd: own('costUsd'), elapsedMs: Date.now() - since.at },
          ...cached('cacheReadTokens'),
          ...cached('cacheCreationTokens'),
          // The wait for approvals is part of the elapsed time; reported apart so the run's own time can be read too.
          ...(waited > 0 ? { approvalWaitMs: waited } : {}),
        },
        stoppedBy,
      };
    };
    let previous = start.previous;
    messages.newExchange();
    for (let turn = start.turn; turn <= start.lastTurn; turn++) {
      eventLog.turn(turn);
      setCurrentDetails(`**turn ${turn}** of ${start.lastTurn} · ${metrics.toolCalls} tool calls so far`);
      const reply = await model.turn(plan, turn, previous);
      if (reply.stopReason === 'tool_use' && reply.toolUses.length > 0) {
        // Totals come from workflow state, rebuilt on replay: the budget holds across worker restarts.
        const totals = { tokens: metrics.inputTokens + metrics.outputTokens, costUsd: metrics.costUsd };
        const last = { tokens: reply.inputTokens + reply.outputTokens, costUsd: reply.costUsd };
        // The session's budget counts from its start; limits a message set for this exchange, from the exchange's.
        const own = {
          tokens: totals.tokens - since.metrics.inputTokens - since.metrics.outputTokens,
          costUsd: totals.costUsd - since.metrics.costUsd,
        };
        const overMission = nextCallExceedsBudget(plan.budget, totals, last);
        const overExchange = nextCallExceedsBudget(messages.exchangeBudget(), own, last);
        // A mission whose policy is `pause` waits at its own budget for a change; a message's limits always end it.
        const goesOn = overMission && !overExchange && (await opts.budgets.pause(plan, turn, totals, last));
        if ((overMission || overExchange) && !goesOn) {
          // The tools just asked for are not run: the final answer takes the place of the next turn.
          ending();
          return finish(await typed(plan, await model.final(plan, turn + 1, [], 'budget'), turn + 1), 'budget');
        }
        opts.toolPhase();
        metrics.toolCalls += reply.toolUses.length;
        // After a pause the switches read with the reply may be stale: each call reads them again as it starts.
        previous = await tools.runTurn(plan, goesOn ? { ...reply, starts: undefined } : reply, turn);
        continue;
      }
      // An answer with messages waiting is a turn boundary like any other: the next turn carries them.
      if (messages.waiting()) {
        previous = [];
        continue;
      }
      // Nothing waits: ending here and refusing later messages are one step (no await between them).
      ending();
      // max_tokens ends the mission with the text so far, marked as such: a cut-off tool call is never run. A typed
      // mission's answer is the one that passed its check (a cut-off answer gets its correction like any other).
      const answer = await typed(plan, reply, turn);
      return finish(answer, answer.stopReason === 'max_tokens' ? 'max_tokens' : 'answer');
    }
    ending();
    const last = start.lastTurn + 1;
    return finish(await typed(plan, await model.final(plan, last, previous, 'turn_budget'), last), 'turn_budget');
  };
}
