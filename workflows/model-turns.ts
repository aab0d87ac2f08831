import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import type { FinalReason, MissionMetrics, MissionPlan, ModelTurnResult, ToolOutcome } from '../contracts/mission.ts';
import { modelOptions } from './activity-options.ts';
import type { Messages } from './messages.ts';

/**
 * A mission's model calls: each turn's call carries the messages waiting at its start, and an interrupt cancels the
 * call in flight, which is then asked again with the interrupt's message (the turn's number and tool results stay).
 */
export function createModelTurns(opts: {
  missionId: string;
  modelTaskQueue: string;
  messages: Messages;
  /** The mission's running totals, counted here as each call returns (budgets read them). */
  metrics: Omit<MissionMetrics, 'approvalWaitMs'>;
  /** Called as each call starts: the mission's phase is `model`. */
  starting: () => void;
  /** The model calls of a session's runs before this one: this run's ids go on after them. */
  callsBefore?: number;
}) {
  const { messages, metrics } = opts;
  const { callModel } = proxyActivities<MissionActivities>(modelOptions(opts.modelTaskQueue));
  // The call in flight that an interrupt may cancel (the forced final call is never interrupted), and its id.
  let inFlight: { scope: CancellationScope; callId: string } | undefined;
  let calls = opts.callsBefore ?? 0;

  const nextId = () => `model-${++calls}`;

  async function call(
    callId: string,
    plan: MissionPlan,
    turn: number,
    previous: ToolOutcome[],
    texts: string[],
    extra: { finalReason?: FinalReason; interrupted?: boolean } = {},
  ): Promise<ModelTurnResult> {
    opts.starting();
    const { finalReason, interrupted } = extra;
    const final = finalReason !== undefined;
    const reply = await callModel.executeWithOptions({ summary: `model ${plan.tier} · turn ${turn}${final ? ' (final)' : ''}` }, [
      {
        ...{ missionId: opts.missionId, callId, turn, tier: plan.tier, previous, final, ...(finalReason ? { finalReason } : {}) },
        ...(texts.length > 0 ? { messages: texts } : {}),
        ...(interrupted ? { interrupted } : {}),
      },
    ]);
    metrics.turns = turn;
    metrics.inputTokens += reply.inputTokens;
    metrics.outputTokens += reply.outputTokens;
    metrics.costUsd += reply.costUsd;
    return reply;
  }

  return {
    /** A turn's call, asked again with the interrupt's message (after those it already carried) each time one cancels it. */
    async turn(plan: MissionPlan, turn: number, previous: ToolOutcome[]): Promise<ModelTurnResult> {
      let texts: string[] = [];
      for (let interrupted = false; ; interrupted = true) {
        texts = [...texts, ...messages.take(turn)];
        const scope = new CancellationScope();
        const callId = nextId();
        inFlight = { scope, callId };
        try {
          return await scope.run(() => call(callId, plan, turn, previous, texts, interrupted ? { interrupted } : {}));
        } catch (err) {
          // Only this call was cancelled (an interrupt): the turn goes on. The mission's own cancellation goes up.
          if (!isCancellation(err) || CancellationScope.current().consideredCancelled) throw err;
        } finally {
          inFlight = undefined;
        }
      }
    },
    /** The forced final call, never interrupted: the messages waiting go in it. */
    final(plan: MissionPlan, turn: number, previous: ToolOutcome[], finalReason: FinalReason): Promise<ModelTurnResult> {
      return call(nextId(), plan, turn, previous, messages.take(turn), { finalReason });
    },
    /** The mission's model calls so far. */
    calls: (): number => calls,
    /** An interrupt: cancels the call in flight, if any (a call that already answered keeps its answer); its id. */
    interrupt(): string[] {
      inFlight?.scope.cancel();
      return inFlight ? [inFlight.callId] : [];
    },
  };
}
