import type { ToolOutputRow } from '../db/transcript.ts';
import type { ToolOutcome } from '../contracts/mission.ts';
import type { ChatMessage, ContentBlock } from '../model/model-types.ts';
import { renderForModel, toolResultForModel } from '../embeds/model-form.ts';
import { SUMMARY_HEADING } from './prompt.ts';

/** The user message carrying a turn's tool results, in the model's order, from the stored tool outputs. */
export function buildToolResultsMessage(rows: ToolOutputRow[], outcomes: ToolOutcome[]): ChatMessage {
  const byId = new Map(rows.map((r) => [r.tool_use_id, r]));
  const content: ContentBlock[] = outcomes.map((o) => {
    const row = byId.get(o.toolUseId);
    if (o.status === 'cancelled')
      return { type: 'tool_result', tool_use_id: o.toolUseId, content: 'cancelled: the user cancelled this tool call', is_error: true };
    // The denial text (who denied, why, or that no one decided in time) is the call's stored output.
    if (o.status === 'denied')
      return {
        type: 'tool_result',
        tool_use_id: o.toolUseId,
        content: row ? renderForModel(row.output).text : (o.error ?? 'denied'),
        is_error: true,
      };
    if (o.status === 'completed' && row)
      return { type: 'tool_result', tool_use_id: o.toolUseId, content: toolResultForModel(row.output).text };
    const detail = row ? renderForModel(row.output).text : (o.error ?? 'the tool failed');
    return { type: 'tool_result', tool_use_id: o.toolUseId, content: `error: ${detail}`, is_error: true };
  });
  return { role: 'user', content };
}

/**
 * The user message that opens a turn: the objective (turn 1) or the previous turn's tool results, then the texts of
 * the messages a person sent, each its own text block. Built from the stored objective's first block only, so writing
 * it again (a retried attempt, an interrupted call started again) never repeats a text.
 */
export function userMessageOfTurn(objective: ChatMessage | undefined, results: ChatMessage | undefined, texts: string[]): ChatMessage {
  const head = objective ? objective.content.slice(0, 1) : (results?.content ?? []);
  return { role: 'user', content: [...head, ...texts.map((text): ContentBlock => ({ type: 'text', text }))] };
}

/**
 * For the forced final call no tools are offered, and providers refuse tool blocks without tool definitions:
 * tool calls and results become plain text, and the instruction to answer closes the last user message.
 */
export function flattenForFinalCall(messages: ChatMessage[], instruction: string): ChatMessage[] {
  const flat = messages.map((m) => ({
    role: m.role,
    content: m.content.map((b): ContentBlock => {
      if (b.type === 'tool_use') return { type: 'text', text: `[called tool ${b.name} with ${JSON.stringify(b.input)}]` };
      if (b.type === 'tool_result')
        return { type: 'text', text: `[tool result ${b.tool_use_id}${b.is_error ? ' (error)' : ''}: ${b.content}]` };
      return b;
    }),
  }));
  const last = flat.at(-1);
  if (last?.role === 'user') last.content.push({ type: 'text', text: instruction });
  else flat.push({ role: 'user', content: [{ type: 'text', text: instruction }] });
  return flat;
}

/**
 * The conversation with a compaction in use: the opening message (position 0) with the summary of the folded turns
 * after it, then the turns kept verbatim, which open with an assistant reply (the cut), so the roles still alternate.
 */
export function withSummary(opening: ChatMessage, kept: ChatMessage[], summary: string): ChatMessage[] {
  return [{ role: 'user', content: [...opening.content, { type: 'text', text: `${SUMMARY_HEADING}\n${summary}` }] }, ...kept];
}
