import type { MissionRow } from '../db/schema.ts';
import type { ChatMessage, ToolSpec } from '../model/model-types.ts';

/**
 * The system prompt: the user context first (when given), then the skill's procedure, the tools it may use, and one
 * line per requested tool that is unavailable and why, so the procedure can degrade gracefully.
 */
export function buildSystemPrompt(input: {
  skillName: string;
  /** The skill's procedure; undefined for an eval's baseline without the skill (same tools, no procedure). */
  body: string | undefined;
  tools: ToolSpec[];
  unavailable?: string[];
  userContext?: string;
}): string {
  const tools = input.tools.length ? input.tools.map((t) => `- ${t.name}: ${t.description}`).join('\n') : '(none)';
  const unavailable = input.unavailable?.length
    ? [`\n## Tools unavailable to this mission\n\n${input.unavailable.map((line) => `- ${line}`).join('\n')}`]
    : [];
  return [
    ...(input.userContext ? [`${input.userContext}\n`] : []),
    ...(input.body === undefined
      ? ['You are carrying out a task for a user with the tools below.']
      : [
          `You are carrying out the skill "${input.skillName}" for a user. Follow its procedure.`,
          `\n## Skill procedure\n\n${input.body.trim()}`,
        ]),
    `\n## Tools available\n\n${tools}`,
    ...unavailable,
  ].join('\n');
}

/**
 * The opening user message: the objective, plus the conversation context, the referenced embeds' content (TOON or
 * JSON, as tool results are shown) and the workspace when given.
 */
export function buildObjectiveMessage(
  m: Pick<MissionRow, 'objective' | 'workspace_code' | 'conversation_context'>,
  embedRefs?: string,
): ChatMessage {
  const parts = [`Objective: ${m.objective}`, `Workspace: ${m.workspace_code}`];
  if (m.conversation_context) parts.push(`Conversation so far:\n${m.conversation_context}`);
  if (embedRefs) parts.push(`Results from earlier tool calls the user refers to:\n${embedRefs}`);
  return { role: 'user', content: [{ type: 'text', text: parts.join('\n\n') }] };
}

export const FINAL_ANSWER_INSTRUCTION =
  'You have used your whole turn budget. Do not call any more tools: give your final answer now, from what you have.';

export const BUDGET_FINAL_INSTRUCTION =
  'The budget of this mission is spent, so the tool calls in your last reply were not run. Do not call any more tools: give your final answer now, from what you have.';

/** The forced call that asks a mission's answer again once it missed the output schema (the errors come before it). */
export const OUTPUT_FINAL_INSTRUCTION =
  'Do not call any more tools: answer again now with only a JSON value that matches the required output schema.';

/**
 * The system prompt of a mission with an output schema: the schema is also offered the provider's way, and said here so
 * the procedure's own wording about the answer gives way to it (and a compatible server without structured outputs
 * still knows it).
 */
export function withOutputFormat(systemPrompt: string, schema: Record<string, unknown>): string {
  return `${systemPrompt}\n\n## Answer format\n\nYour final answer must be only a JSON value matching this JSON Schema:\n${JSON.stringify(schema)}`;
}

/** Opens the summary that stands for the turns a context compaction folded. */
export const SUMMARY_HEADING = 'Summary of the conversation so far (older turns, folded to fit the context):';

/** The compaction call's system prompt: the summary replaces those turns for every later call. */
export const COMPACTION_INSTRUCTION = [
  'You compact a conversation between a user and an assistant that carries out a skill with tools.',
  'Write a summary that lets the assistant go on without the folded turns: the objective and every request the user made,',
  'decisions and answers given, facts and figures the tools returned that may matter later (with their tool names),',
  'what is still open. Be complete and concise; plain text, no preamble.',
].join(' ');
