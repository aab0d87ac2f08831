import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import type { FinalReason, MissionMetrics, MissionPlan, ModelFallback, ModelTurnResult, ToolOutcome } from '../contracts/mission.ts';
import { modelOptions } from './activity-options.ts';
import type { EventLog } from './event-log.ts';
import { alongChain } from './model-fallback.ts';
import { takeProviderTurn } from './provider-turn.ts';
import type { Messages } from './messages.ts';

/**
 * A mission's model calls: each turn's call carries the messages waiting at its start, and an interrupt cancels the
 * call in flight, which is then asked again with the interrupt's message (the turn's number and tool results stay).
 * Once a call's prompt reached the plan's compaction threshold, the next call is preceded by a compaction: the older
 * turns folded into a summary by its own activity.
 */
export function createModelTurns(opts: {
  missionId: string;
  modelTaskQueue: string;
  messages: Messages;
  eventLog: EventLog;
  /** The mission's running totals, counted here as each call returns (budgets read them). */
  metrics: Omit<MissionMetrics, 'approvalWaitMs'>;
  /** Called as each call starts: the mission's phase is `model`. */
  starting: () => void;
  /** The model calls of a session's runs before this one: this run's ids go on after them. */
  callsBefore?: number;
  /** The exchange in progress (a session's user context is read again for each: the call reads that one's). */
  exchange: () => number;
}) {
  const { messages, metrics } = opts;
  const { callModel, compactContext } = proxyActivities<MissionActivities>(modelOptions(opts.modelTaskQueue));
  // The call in flight that an interrupt may cancel (the forced final call is never interrupted), and its id.
  let inFlight: { scope: CancellationScope; callId: string } | undefined;
  let calls = opts.callsBefore ?? 0;
  // The last call's prompt and reply, in tokens: the next prompt is at least that. The last turn folded so far (a
  // session's continued run starts at 0: the compaction activity knows its stored cuts and folds nothing twice).
  let promptTokens = 0;
  let foldedUpTo = 0;
  // The stamp of the transcript as last stored by a call this workflow acted on (undefined until one answered: the
  // plan's, prepareMission's; `{}` after a compaction, which changes what a call reads): the worker that stored it
  // under that stamp answers from memory, any other reads Postgres (activities/transcript-cache.ts).
  let transcript: { stamp?: string } | undefined;

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
    const stamp = transcript ? transcript.stamp : plan.stamp;
    // The tier's chain: once a target's retries are spent on an overload or an outage, the same call goes to the next
    // one, a new activity with retries of its own (each visible in the Web UI); anything else fails the call.
    const reply = await alongChain(
      async (fallback) => {
        const reservation = await reserve(plan, callId, turn, fallback);
        return callModel.executeWithOptions(
          { summary: `model ${plan.tier} · turn ${turn}${final ? ' (final)' : ''}${fallback ? ` · fallback ${fallback.to}` : ''}` },
          [
            {
              ...{ missionId: opts.missionId, callId, turn, tier: plan.tier, previous, final, ...(finalReason ? { finalReason } : {}) },
              ...(texts.length > 0 ? { messages: texts } : {}),
              ...(interrupted ? { interrupted } : {}),
              ...(fallback ? { fallback } : {}),
              ...(opts.exchange() > 1 ? { exchange: opts.exchange() } : {}),
              ...(reservation ? { reservation } : {}),
              ...(stamp ? { transcript: stamp } : {}),
            },
          ],
        );
      },
      (switched) => opts.eventLog.emit({ type: 'model_fallback', turn, ...switched }),
    );
    metrics.turns = turn;
    transcript = { ...(reply.stamp ? { stamp: reply.stamp } : {}) };
    count(reply);
    promptTokens = reply.inputTokens + reply.outputTokens;
    return reply;
  }

  /** Under PROVIDER_LIMITS a call first takes its turn at its target (each fallback's at its own). */
  const reserve = (plan: MissionPlan, callId: string, turn: number, fallback: ModelFallback | undefined) =>
    plan.providerLimits
      ? takeProviderTurn({ missionId: opts.missionId, callId, tier: plan.tier, promptTokens, ...(fallback ? { fallback } : {}) }, (w) =>
          opts.eventLog.emit({ type: 'provider_wait', turn, ...w }),
        )
      : Promise.resolve(undefined);

  const count = (spent: Pick<ModelTurnResult, 'inputTokens' | 'outputTokens' | 'costUsd' | 'cacheReadTokens' | 'cacheCreationTokens'>) => {
    metrics.inputTokens += spent.inputTokens;
    metrics.outputTokens += spent.outputTokens;
    metrics.costUsd += spent.costUsd;
    if (spent.cacheReadTokens) metrics.cacheReadTokens = (metrics.cacheReadTokens ?? 0) + spent.cacheReadTokens;
    if (spent.cacheCreationTokens) metrics.cacheCreationTokens = (metrics.cacheCreationTokens ?? 0) + spent.cacheCreationTokens;
  };

  /** Before turn `turn`'s call: folds the turns before the latest `keepTurns` once the last prompt reached the threshold. */
  async function compactIfDue(plan: MissionPlan, turn: number): Promise<void> {
    const c = plan.compaction;
    if (!c || promptTokens < c.atTokens || turn - c.keepTurns <= foldedUpTo) return;
    opts.starting();
    const compacted = await alongChain(
      async (fallback) => {
        // The summary is a model call like any other: under PROVIDER_LIMITS it takes a turn too.
        const reservation = await reserve(plan, `compact-${calls + 1}`, turn, fallback);
        return compactContext.executeWithOptions(
          { summary: `compact context · before turn ${turn}${fallback ? ` · fallback ${fallback.to}` : ''}` },
          [
            {
              ...{ missionId: opts.missionId, turn, keepTurns: c.keepTurns, tier: plan.tier },
              ...(fallback ? { fallback } : {}),
              ...(reservation ? { reservation } : {}),
            },
          ],
        );
      },
      (switched) => opts.eventLog.emit({ type: 'model_fallback', turn, ...switched }),
    );
    count(compacted); // the summary call counts against the budgets like any other
    if (compacted.folded) {
      foldedUpTo = compacted.folded.uptoTurn;
      const { uptoTurn, messages: folded } = compacted.folded;
      opts.eventLog.emit({ type: 'context_compacted', turn, uptoTurn, messages: folded, promptTokens });
    }
    promptTokens = 0; // unknown until the next call answers
    transcript = {};
  }

  return {
    /** A turn's call, asked again with the interrupt's message (after those it already carried) each time one cancels it. */
    async turn(plan: MissionPlan, turn: number, previous: ToolOutcome[]): Promise<ModelTurnResult> {
      await compactIfDue(plan, turn);
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
    /** The forced final call, never interrupted: the messages waiting go in it, then `note` (an output correction). */
    async final(
      plan: MissionPlan,
      turn: number,
      previous: ToolOutcome[],
      finalReason: FinalReason,
      note?: string,
    ): Promise<ModelTurnResult> {
      // Not when the budget is what forces it: a summary would spend more of what is already spent.
      if (finalReason !== 'budget') await compactIfDue(plan, turn);
      return call(nextId(), plan, turn, previous, [...messages.take(turn), ...(note ? [note] : [])], { finalReason });
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
