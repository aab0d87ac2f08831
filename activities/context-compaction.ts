import { ApplicationFailure } from '@temporalio/activity';
import { findCompaction, latestCompaction, putCompaction, readMessagesBetween } from '../db/compactions.ts';
import type { CompactionInput, CompactionResult } from '../contracts/mission.ts';
import type { ChatMessage, ContentBlock } from '../model/model-types.ts';
import { callCostUsd } from '../model/pricing.ts';
import type { ActivityDeps } from './deps.ts';
import { withHeartbeat } from './heartbeat.ts';
import { COMPACTION_INSTRUCTION, SUMMARY_HEADING } from './prompt.ts';
import { toFailure } from './model-activity.ts';
import { limitedCall } from './limited-call.ts';

const SUMMARY_MAX_TOKENS = 2_048;
/** A tool result is shown to the summariser at most this long: its gist, not its bytes. */
const RESULT_CHARS = 1_500;
const COMPACTION_ATTEMPT_TIMEOUT_MS = 180_000;

/** Turn `turn`'s reply is at this transcript position (model-activity.ts). */
const replySeq = (turn: number) => 2 * turn - 1;

/**
 * The compaction activity: folds the transcript before the reply of turn `turn - keepTurns` (with the summary in use,
 * if any) into a new summary the model writes, stored once per cut: a retried attempt, or a replay, reads the stored
 * one and never asks the model again. The cut is always an assistant reply, so the turns kept verbatim open with the
 * call whose results follow it: no tool call is parted from its result.
 */
export function createCompactionActivity({ db, modelTargets, model }: ActivityDeps) {
  return {
    async compactContext(input: CompactionInput): Promise<CompactionResult> {
      const none = { folded: undefined, inputTokens: 0, outputTokens: 0, costUsd: 0 };
      const uptoTurn = input.turn - input.keepTurns;
      if (uptoTurn < 1) return none;
      const cut = replySeq(uptoTurn);
      const stored = await findCompaction(db, input.missionId, cut);
      if (stored) return { ...none, folded: { uptoTurn, messages: stored.foldedMessages } };
      const previous = await latestCompaction(db, input.missionId);
      if (previous && previous.uptoSeq >= cut) return none;
      const rows = await readMessagesBetween(db, input.missionId, previous?.uptoSeq ?? 0, cut);
      if (rows.length === 0) return none;
      const step = input.fallback?.step ?? 0;
      const resolved = modelTargets.resolve(input.tier, step);
      if (!resolved) throw ApplicationFailure.nonRetryable(`model tier ${input.tier} has no step ${step} in its chain`, 'UnknownTier');
      const modelId = resolved.target.model;
      const limited = limitedCall(db, model.providerLimits, resolved.label, input.reservation);
      await limited.beforeSend();
      const transcript = rows.map((r) => asText({ role: r.role as ChatMessage['role'], content: r.content as ContentBlock[] }));
      const earlier = previous ? [`${SUMMARY_HEADING}\n${previous.summary}`] : [];
      const response = await withHeartbeat(2_000, (signal) =>
        resolved.client
          .complete({
            model: modelId,
            system: COMPACTION_INSTRUCTION,
            messages: [{ role: 'user', content: [{ type: 'text', text: [...earlier, ...transcript].join('\n\n') }] }],
            tools: [],
            maxTokens: SUMMARY_MAX_TOKENS,
            signal: AbortSignal.any([signal, AbortSignal.timeout(COMPACTION_ATTEMPT_TIMEOUT_MS)]),
          })
          .catch((err: unknown) => {
            throw toFailure(err, { target: resolved.label, ...(resolved.next ? { next: resolved.next } : {}) });
          }),
      );
      await limited.settle(response.usage);
      const summary = response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      if (summary.trim() === '') throw ApplicationFailure.retryable('the model wrote an empty summary', 'EmptySummary');
      const kept = await putCompaction(db, input.missionId, { uptoSeq: cut, summary, foldedMessages: rows.length });
      return {
        folded: { uptoTurn, messages: kept.foldedMessages },
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        costUsd: callCostUsd(model.prices, [modelId, response.model], response.usage),
      };
    },
  };
}

/** One transcript message as plain text for the summariser: tool calls and results named, long results cut. */
function asText(m: ChatMessage): string {
  const parts = m.content.map((b) => {
    if (b.type === 'text') return b.text;
    if (b.type === 'tool_use') return `[called ${b.name} with ${JSON.stringify(b.input)}]`;
    if (b.type === 'tool_result') {
      const content = b.content.length > RESULT_CHARS ? `${b.content.slice(0, RESULT_CHARS)}… (cut)` : b.content;
      return `[result of ${b.tool_use_id}${b.is_error ? ' (error)' : ''}: ${content}]`;
    }
    return '';
  });
  return `${m.role === 'user' ? 'User' : 'Assistant'}: ${parts.join('\n')}`;
}
