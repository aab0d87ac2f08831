import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Metrics } from '../telemetry/metrics.ts';
import type { ModelTurnInput, ModelTurnResult, ProviderTurn, ToolCallInput, ToolCallResult } from '../contracts/mission.ts';

/**
 * Measures every activity attempt at one place: its wait in the task queue, and for model and tool calls their
 * duration and outcome (a 429 is `rate_limited`), tokens and cost, and a model call's switch to a fallback. The
 * activities themselves stay as they are.
 */
export function createActivityMetricsInterceptor(metrics: Metrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { activityType, currentAttemptScheduledTimestampMs, attempt } = ctx.info;
        metrics.queueWait(activityType, (Date.now() - currentAttemptScheduledTimestampMs) / 1000);
        // A switch to a fallback is counted once, as its call's first attempt starts.
        const modelInput = MODEL_ACTIVITIES.has(activityType) ? (input.args[0] as Pick<ModelTurnInput, 'tier' | 'fallback'>) : undefined;
        if (modelInput?.fallback && attempt === 1) {
          const { from, to, reason } = modelInput.fallback;
          metrics.modelFallback({ tier: modelInput.tier, from, to, reason });
        }
        const startedAt = performance.now();
        const seconds = () => (performance.now() - startedAt) / 1000;
        try {
          const out = await next(input);
          if (activityType === 'callModel') {
            const r = out as ModelTurnResult;
            const tier = (input.args[0] as ModelTurnInput).tier;
            metrics.modelCall({
              tier,
              outcome: 'ok',
              seconds: seconds(),
              inputTokens: r.inputTokens,
              outputTokens: r.outputTokens,
              ...(r.cacheReadTokens ? { cacheReadTokens: r.cacheReadTokens } : {}),
              ...(r.cacheCreationTokens ? { cacheCreationTokens: r.cacheCreationTokens } : {}),
              costUsd: r.costUsd,
            });
          } else if (activityType === 'runTool') {
            metrics.toolCall((input.args[0] as ToolCallInput).qualifiedName, (out as ToolCallResult).status, seconds());
          } else if (activityType === 'reserveModelCall') {
            const turn = out as ProviderTurn;
            if (turn.granted && turn.reservation) metrics.providerTurn({ target: turn.target, waitedMs: turn.waitedMs ?? 0 });
            else if (!turn.granted) metrics.providerTurn({ target: turn.target, waitMs: turn.waitMs });
          }
          return out;
        } catch (err) {
          if (activityType === 'callModel')
            metrics.modelCall({ tier: (input.args[0] as ModelTurnInput).tier, outcome: modelOutcome(err), seconds: seconds() });
          else if (activityType === 'runTool')
            metrics.toolCall(
              (input.args[0] as ToolCallInput).qualifiedName,
              err instanceof CancelledFailure ? 'cancelled' : 'failed',
              seconds(),
            );
          throw err;
        }
      },
    },
  });
}

/** The activities that call a model along a tier's chain (a turn's call, a compaction's summary). */
const MODEL_ACTIVITIES = new Set(['callModel', 'compactContext']);

/** The provider error's kind (model-activity.ts types its failures `Model.<kind>`), or cancelled / error. */
function modelOutcome(err: unknown): string {
  if (err instanceof CancelledFailure) return 'cancelled';
  const kind = err instanceof ApplicationFailure ? /^Model\.(\w+)$/.exec(err.type ?? '')?.[1] : undefined;
  return kind && ['rate_limited', 'server_error', 'client_error', 'network', 'malformed'].includes(kind) ? kind : 'error';
}
