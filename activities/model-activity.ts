import { ApplicationFailure, Context } from '@temporalio/activity';
import { getMission } from '../db/missions.ts';
import { putMessage, readMessages } from '../db/transcript.ts';
import type { ModelTurnInput, ModelTurnResult, ToolUse } from '../workflows/definitions.ts';
import { withHeartbeat } from './heartbeat.ts';
import type { ActivityDeps } from './deps.ts';
import { ModelCallError, type ChatMessage, type ToolUseBlock } from '../model/model-types.ts';
import { BUDGET_FINAL_INSTRUCTION, FINAL_ANSWER_INSTRUCTION } from './prompt.ts';
import { callCostUsd } from '../model/pricing.ts';
import { buildToolResultsMessage, flattenForFinalCall } from './transcript-messages.ts';

const MODEL_ATTEMPT_TIMEOUT_MS = 180_000;

// Transcript positions: 0 is the objective; turn t writes its tool results at 2(t-1) and the reply at 2t-1.
const resultsSeq = (turn: number) => 2 * (turn - 1);
const replySeq = (turn: number) => 2 * turn - 1;

/** The model activity: reads the transcript from Postgres, calls the provider once, appends the reply. */
export function createModelActivity({ db, modelClient, model }: ActivityDeps) {
  return {
    async callModel(input: ModelTurnInput): Promise<ModelTurnResult> {
      const mission = await getMission(db, input.missionId);
      if (input.previous.length > 0) {
        await putMessage(
          db,
          input.missionId,
          resultsSeq(input.turn),
          await buildToolResultsMessage(db, input.missionId, input.turn - 1, input.previous),
        );
      }
      let messages: ChatMessage[] = await readMessages(db, input.missionId, replySeq(input.turn));
      const catalog = mission.catalog ?? [];
      if (input.final)
        messages = flattenForFinalCall(messages, input.finalReason === 'budget' ? BUDGET_FINAL_INSTRUCTION : FINAL_ANSWER_INSTRUCTION);
      const modelId = model.tiers[input.tier]; // resolved at each call: a changed map applies on the next turn
      if (!modelId) throw ApplicationFailure.nonRetryable(`unknown model tier ${input.tier}`, 'UnknownTier');
      const startedAt = Date.now();
      const response = await withHeartbeat(2_000, (signal) =>
        modelClient
          .complete({
            model: modelId,
            system: mission.system_prompt ?? '',
            messages,
            tools: input.final ? [] : catalog.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
            maxTokens: model.maxTokens,
            signal: AbortSignal.any([signal, AbortSignal.timeout(MODEL_ATTEMPT_TIMEOUT_MS)]),
          })
          .catch((err: unknown) => {
            throw toFailure(err);
          }),
      );
      await putMessage(db, input.missionId, replySeq(input.turn), { role: 'assistant', content: response.content });
      await db
        .insertInto('model_calls')
        .values({
          mission_id: input.missionId,
          call_key: `turn-${input.turn}`,
          model: response.model,
          input_tokens: response.usage.inputTokens,
          output_tokens: response.usage.outputTokens,
          stop_reason: response.stopReason,
          duration_ms: Date.now() - startedAt,
        })
        .onConflict((oc) => oc.constraint('model_calls_key').doNothing())
        .execute();
      const toolUses: ToolUse[] = response.content
        .filter((b): b is ToolUseBlock => b.type === 'tool_use')
        .map(({ id, name, input }) => ({ id, name, input }));
      const text = response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      const { inputTokens, outputTokens } = response.usage;
      const costUsd = callCostUsd(model.prices, [modelId, response.model], response.usage);
      return { stopReason: response.stopReason, toolUses, text, inputTokens, outputTokens, model: modelId, costUsd };
    },
  };
}

/** Maps a classified provider error onto the retry policy: permanent errors fail at once, Retry-After is honoured. */
export function toFailure(err: unknown): unknown {
  if (!(err instanceof ModelCallError)) return err;
  const attempt = Context.current().info.attempt;
  return ApplicationFailure.create({
    type: `Model.${err.kind}`,
    message: `model call failed (attempt ${attempt}): ${err.message}`,
    nonRetryable: !err.retryable,
    ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
  });
}
