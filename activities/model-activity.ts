import { ApplicationFailure, Context } from '@temporalio/activity';
import { putReplyAndCall } from '../db/transcript.ts';
import { limitedCall } from './limited-call.ts';
import type { MissionFactsCache } from './mission-facts.ts';
import { asStored, type TranscriptCache } from './transcript-cache.ts';
import { readTurn } from './turn-inputs.ts';
import { startsWithReply, type FinalReason, type ModelTurnInput, type ModelTurnResult, type ToolUse } from '../contracts/mission.ts';
import { withHeartbeat } from './heartbeat.ts';
import { withAnnouncedCancel } from './announced-cancel.ts';
import { beat } from './checkpoint.ts';
import { answerOnce } from './kept-answer.ts';
import type { ActivityDeps } from './deps.ts';
import { ModelCallError, type ChatMessage, type ToolUseBlock } from '../model/model-types.ts';
import { BUDGET_FINAL_INSTRUCTION, FINAL_ANSWER_INSTRUCTION, OUTPUT_FINAL_INSTRUCTION, withOutputFormat } from './prompt.ts';
import { checkOutput } from '../lib/output-schema.ts';
import { callCostUsd } from '../model/pricing.ts';
import type { ModelFailureDetails } from '../contracts/model.ts';
import { embedIdOf } from './tool-embeds.ts';
import type { CatalogEntry } from '../db/schema.ts';
import { buildToolResultsMessage, flattenForFinalCall, userMessageOfTurn, withSummary } from './transcript-messages.ts';

const MODEL_ATTEMPT_TIMEOUT_MS = 180_000;

/** What closes a forced final call's last user message, by why it is forced. */
const FINAL_INSTRUCTIONS: Record<FinalReason, string> = {
  turn_budget: FINAL_ANSWER_INSTRUCTION,
  budget: BUDGET_FINAL_INSTRUCTION,
  output: OUTPUT_FINAL_INSTRUCTION,
};

// Transcript positions: 0 is the objective; turn t writes its user message (the previous turn's tool results, then the
// messages a person sent) at 2(t-1) and the reply at 2t-1.
const resultsSeq = (turn: number) => 2 * (turn - 1);
const replySeq = (turn: number) => 2 * turn - 1;

/**
 * The model activity: reads the transcript (from this worker's memory when it stored what the workflow saw, else from
 * Postgres), calls the provider once (its reply kept until stored, so a database outage never pays for it twice), and
 * stores the turn's opening message, the reply and the usage in one statement.
 */
export function createModelActivity(
  { db, modelTargets, model, live, logger, toolCancels }: ActivityDeps,
  facts: MissionFactsCache,
  transcripts: TranscriptCache,
) {
  return {
    async callModel(input: ModelTurnInput): Promise<ModelTurnResult> {
      const hasResults = input.previous.length > 0;
      const texts = input.messages ?? [];
      // The turn opens with a user message of its own when it carries tool results or a person's messages; turn 1's
      // is the objective (position 0), which a message delivered then joins.
      const opensWithUser = hasResults || texts.length > 0;
      const beforeSeq = opensWithUser ? resultsSeq(input.turn) : replySeq(input.turn);
      // The frozen mission facts (cached per worker) beside the conversation so far and the previous turn's tool
      // outputs: from memory when this worker stored them under the stamps the workflow passed, else one round trip.
      const [mission, { conversation, outputs, objective }] = await Promise.all([
        facts.get(input.missionId, input.exchange, input.transcript),
        readTurn(db, transcripts, input, beforeSeq),
      ]);
      const { messages: read, compaction } = conversation;
      // With a compaction in use, what was read is the opening message and the turns from the cut on.
      const earlier = compaction ? withSummary(read[0]!, read.slice(1), compaction.summary) : read;
      const opening = opensWithUser
        ? userMessageOfTurn(objective, hasResults ? buildToolResultsMessage(outputs, input.previous) : undefined, texts)
        : undefined;
      let messages: ChatMessage[] = opening ? [...earlier, opening] : earlier;
      if (input.final) messages = flattenForFinalCall(messages, FINAL_INSTRUCTIONS[input.finalReason ?? 'turn_budget']);
      // Resolved at each call: a changed map applies on the next turn. Step 0 is the tier's model, n its n-th fallback.
      const step = input.fallback?.step ?? 0;
      const resolved = modelTargets.resolve(input.tier, step);
      if (!resolved) throw ApplicationFailure.nonRetryable(`model tier ${input.tier} has no step ${step} in its chain`, 'UnknownTier');
      const modelId = resolved.target.model;
      const { output } = mission;
      // Streamed text goes to SSE clients as live events, never into history; a call made again after a failed
      // attempt (or by a fallback) first says to drop what that one showed, so no client glues two half-answers together
      // (a kept reply is not asked again: what was shown stands).
      const { missionId, turn } = input;
      const limited = limitedCall(db, model.providerLimits, resolved.label, input.reservation);
      const onText = live ? (text: string) => live.publish(missionId, { type: 'text_delta', turn, text }) : undefined;
      // The reply is kept before it is stored: a store that meets a database outage is retried, the call is not.
      const { response, durationMs } = await answerOnce(async () => {
        if (live && (Context.current().info.attempt > 1 || input.interrupted || input.fallback))
          live.publish(missionId, { type: 'reset', turn });
        await limited.beforeSend();
        const startedAt = Date.now();
        // An interrupt's cancel is announced by the API the moment the workflow accepts it: the call is dropped at once
        // rather than at the next heartbeat (up to 2 s).
        const call = { missionId, callId: input.callId };
        const ctx = Context.current(); // the announcement arrives outside the activity's context
        const response = await withHeartbeat(2_000, (timerSignal) =>
          withAnnouncedCancel(
            toolCancels,
            call,
            () => beat(ctx),
            timerSignal,
            (signal) =>
              resolved.client
                .complete({
                  model: modelId,
                  system: output ? withOutputFormat(mission.systemPrompt, output.schema) : mission.systemPrompt,
                  messages,
                  tools: input.final
                    ? []
                    : mission.catalog.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
                  maxTokens: model.maxTokens,
                  ...(output ? { outputSchema: output.schema } : {}),
                  signal: AbortSignal.any([signal, AbortSignal.timeout(MODEL_ATTEMPT_TIMEOUT_MS)]),
                  ...(onText ? { onText } : {}),
                })
                .catch((err: unknown) => {
                  throw toFailure(err, { target: resolved.label, ...(resolved.next ? { next: resolved.next } : {}) });
                }),
          ),
        );
        return { response, durationMs: Date.now() - startedAt };
      }, logger);
      const toolUses: ToolUse[] = response.content
        .filter((b): b is ToolUseBlock => b.type === 'tool_use')
        .map(({ id, name, input }) => ({ id, name, input }));
      // An answer (no tool to run): a typed mission's is checked here; a cut-off or final reply's tool uses never run.
      const answered = !(response.stopReason === 'tool_use' && toolUses.length > 0);
      const embedIds = toolUses.map((tu) => embedIdOf(input.missionId, input.turn, tu.id));
      // The calls that go straight to the tool activity start with the reply (their feed row, their embed
      // `processing`); a call that waits first (for a person, its caller, a child) writes its own start when it runs.
      const started = answered || input.final ? [] : startedWithReply(toolUses, embedIds, mission.catalog);
      // The opening message is stored with the reply, in its statement: it is rebuilt from stored outputs and the
      // workflow's input, so a retried attempt, or the call an interrupt starts again, writes the same position anew.
      const stamp = transcripts.stamp();
      const reply: ChatMessage = { role: 'assistant', content: response.content };
      const { switches } = await putReplyAndCall(
        db,
        input.missionId,
        replySeq(input.turn),
        reply,
        {
          callKey: `turn-${input.turn}`,
          provider: resolved.target.provider,
          model: response.model,
          inputTokens: response.usage.inputTokens,
          outputTokens: response.usage.outputTokens,
          stopReason: response.stopReason,
          durationMs,
        },
        Context.current().info.currentAttemptScheduledTimestampMs,
        opening ? { seq: resultsSeq(input.turn), message: opening } : undefined,
        {
          owner: mission.owner,
          turn: input.turn,
          calls: started.map((s) => ({ ...s, missionId: input.missionId, turn: input.turn })),
          toolUseIds: toolUses.map((tu) => tu.id),
        },
      );
      // What the next call reads, kept under this write's stamp (the workflow passes it back once it acts on this reply).
      transcripts.keepConversation(input.missionId, stamp, {
        messages: [...read, ...(opening ? [opening] : []), asStored(reply)],
        nextSeq: replySeq(input.turn) + 1,
        ...(compaction ? { compaction } : {}),
      });
      transcripts.dropOutputsBefore(input.missionId, input.turn);
      // The turn reserved at PROVIDER_LIMITS gets the tokens the provider counted (a retried attempt settles nothing twice).
      await limited.settle(response.usage);
      const text = response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      const { inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens } = response.usage;
      const costUsd = callCostUsd(model.prices, [modelId, response.model], response.usage);
      return {
        ...{ stopReason: response.stopReason, toolUses, text, inputTokens, outputTokens, costUsd },
        ...(output && answered ? { output: checkOutput(text, output.validate) } : {}),
        ...{ model: modelId, provider: resolved.target.provider },
        ...(cacheReadTokens ? { cacheReadTokens } : {}),
        ...(cacheCreationTokens ? { cacheCreationTokens } : {}),
        stamp,
        ...(toolUses.length > 0 ? { embedIds } : {}),
        ...(started.length > 0 ? { starts: { toolUseIds: started.map((s) => s.toolUseId), switches } } : {}),
      };
    },
  };
}

/** The tool uses whose start the reply's statement writes: those of known tools that start with it (`startsWithReply`). */
function startedWithReply(toolUses: ToolUse[], embedIds: string[], catalog: CatalogEntry[]) {
  return toolUses.flatMap((tu, i) => {
    const entry = catalog.find((c) => c.name === tu.name);
    return entry && startsWithReply(entry) ? [{ id: embedIds[i]!, toolUseId: tu.id, tool: entry.qualifiedName }] : [];
  });
}

/**
 * Maps a classified provider error onto the retry policy: permanent errors fail at once, Retry-After is honoured. The
 * details name the target that failed and the chain's next one: the workflow decides on them once retries are spent.
 */
export function toFailure(err: unknown, details?: ModelFailureDetails): unknown {
  if (!(err instanceof ModelCallError)) return err;
  const attempt = Context.current().info.attempt;
  return ApplicationFailure.create({
    type: `Model.${err.kind}`,
    message: `model call failed (attempt ${attempt}): ${err.message}`,
    nonRetryable: !err.retryable,
    ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
    ...(details ? { details: [details] } : {}),
  });
}
