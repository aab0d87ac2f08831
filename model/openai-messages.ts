import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage } from './model-types.ts';

/**
 * The neutral conversation as Chat Completions messages: system prompt first, assistant tool uses as
 * `tool_calls`, and each tool result as its own `role: "tool"` message.
 */
export function toOpenAIMessages(system: string, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    if (message.role === 'assistant') out.push(toAssistantMessage(message));
    else out.push(...toUserMessages(message));
  }
  return out;
}

function toAssistantMessage(message: ChatMessage): ChatCompletionMessageParam {
  const text = joinText(message);
  const toolCalls = message.content.flatMap((block) =>
    block.type === 'tool_use'
      ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input) } }]
      : [],
  );
  return {
    role: 'assistant',
    // Chat Completions wants null, not "", when an assistant turn is only tool calls.
    content: text || null,
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
  };
}

// Tool messages must directly follow the assistant's tool_calls, so they go before any user text.
function toUserMessages(message: ChatMessage): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result') continue;
    out.push({
      role: 'tool',
      tool_call_id: block.tool_use_id,
      content: block.is_error ? `ERROR: ${block.content}` : block.content,
    });
  }
  const text = joinText(message);
  if (text) out.push({ role: 'user', content: text });
  return out;
}

function joinText(message: ChatMessage): string {
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n\n');
}
