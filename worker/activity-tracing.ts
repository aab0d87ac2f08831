import { SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import { CancelledFailure } from '@temporalio/common';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import type { Tier } from '../contracts/model.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { ModelTurnInput, ModelTurnResult, ToolCallInput, ToolCallResult } from '../contracts/mission.ts';
import type { FactoryPlan } from '../contracts/script-factory.ts';

/** What a tool span's `cadenza.tool.outcome` says: the result's status, or how the attempt ended without one. */
export const ATTR_TOOL_OUTCOME = 'cadenza.tool.outcome';

/**
 * The activity side of a mission's trace, first among a worker's interceptors so the others run inside it: the
 * Temporal interceptor's `RunActivity:<type>` span, a child of the workflow's `StartActivity` (its context comes in
 * the activity's headers), and under it a GenAI span for model calls (`chat <model>`: provider, model, tokens) and
 * tool calls (`execute_tool <tool>`: the tool and its outcome; the script factory's `writeScript` is a model call too,
 * whose result carries no usage), in whose context the HTTP tool executor sends
 * `traceparent`. The SDK's activity logger (`log` of @temporalio/activity) adds the trace and span ids.
 */
export function createActivityTracingInterceptors(tracing: Tracing, model: Config['model']): ActivityInterceptorsFactory[] {
  const { tracer } = tracing;
  const temporal: ActivityInterceptorsFactory = (ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  });
  /** A model call's CLIENT span, `chat <model>`, named and described as the GenAI conventions say. */
  const chatSpan = <T>(tier: Tier, extra: Attributes, fn: (span: Span) => Promise<T>) => {
    const requested = model.tiers[tier];
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_PROVIDER_NAME]: model.provider,
      [ATTR_GEN_AI_SYSTEM]: model.provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: requested,
      'cadenza.model.tier': tier,
      ...extra,
    };
    return tracer.startActiveSpan(`chat ${requested}`, { kind: SpanKind.CLIENT, attributes }, fn);
  };
  const genAi: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      execute(input, next) {
        const type = ctx.info.activityType;
        if (type === 'callModel') {
          const call = input.args[0] as ModelTurnInput;
          const extra = { 'cadenza.mission.id': call.missionId, 'cadenza.mission.turn': call.turn };
          return chatSpan(call.tier, extra, (span) =>
            ended(span, next(input), (out) => {
              const r = out as ModelTurnResult;
              span.setAttributes({
                [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: r.inputTokens,
                [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: r.outputTokens,
                // The OTel GenAI conventions' names for the prompt-cache parts of the input.
                ...(r.cacheReadTokens ? { 'gen_ai.usage.cache_read.input_tokens': r.cacheReadTokens } : {}),
                ...(r.cacheCreationTokens ? { 'gen_ai.usage.cache_creation.input_tokens': r.cacheCreationTokens } : {}),
                [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [r.stopReason],
                ...(r.model ? { [ATTR_GEN_AI_RESPONSE_MODEL]: r.model } : {}),
                ...(r.costUsd !== undefined ? { 'cadenza.model.cost_usd': r.costUsd } : {}),
              });
            }),
          );
        }
        if (type === 'writeScript') {
          const { plan, attempt } = input.args[0] as { plan: FactoryPlan; attempt: number };
          const extra = { 'cadenza.factory.script': plan.script, 'cadenza.factory.attempt': attempt };
          return chatSpan(plan.tier, extra, (span) => ended(span, next(input), () => {}));
        }
        if (type === 'runTool') {
          const call = input.args[0] as ToolCallInput;
          const attributes: Attributes = {
            [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
            [ATTR_GEN_AI_TOOL_NAME]: call.qualifiedName,
            [ATTR_GEN_AI_TOOL_CALL_ID]: call.toolUse.id,
            'cadenza.mission.id': call.missionId,
            'cadenza.mission.turn': call.turn,
          };
          return tracer.startActiveSpan(`execute_tool ${call.qualifiedName}`, { kind: SpanKind.INTERNAL, attributes }, (span) =>
            ended(
              span,
              next(input),
              (out) => {
                const r = out as ToolCallResult;
                span.setAttribute(ATTR_TOOL_OUTCOME, r.status);
                // The tool answered with an error: data for the model, and the span says so.
                if (r.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? 'tool error' });
              },
              (err) => span.setAttribute(ATTR_TOOL_OUTCOME, err instanceof CancelledFailure ? 'cancelled' : 'failed'),
            ),
          );
        }
        return next(input);
      },
    },
  });
  return [temporal, genAi];
}

/** Ends `span` when `work` settles: the result's attributes on success, the error (or cancellation) on failure. */
async function ended<T>(span: Span, work: Promise<T>, onResult: (out: T) => void, onError?: (err: unknown) => void): Promise<T> {
  try {
    const out = await work;
    onResult(out);
    return out;
  } catch (err) {
    const cancelled = err instanceof CancelledFailure;
    onError?.(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    if (!cancelled && err instanceof Error) span.recordException(err);
    throw err;
  } finally {
    span.end();
  }
}
