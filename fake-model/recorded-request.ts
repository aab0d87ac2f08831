import type { IncomingHttpHeaders } from 'node:http';
import { FACTORY_PROMPT_MARKER } from '../contracts/script-factory.ts';
import type { FakeProtocol, FakeToolResult, RecordedRequest } from './fake-model-types.ts';
import { requestedSchema } from './structured-output.ts';

type Json = Record<string, unknown>;

/** A record of one received request, with the neutral views computed from either protocol's body. */
export function createRecordedRequest(protocol: FakeProtocol, path: string, headers: IncomingHttpHeaders, body: unknown): RecordedRequest {
  const b = asObject(body);
  const messages = Array.isArray(b.messages) ? (b.messages as unknown[]) : [];
  const tools = Array.isArray(b.tools) ? (b.tools as unknown[]) : [];
  const resultsOf = protocol === 'anthropic' ? anthropicToolResults : openaiToolResults;
  const asked = requestedSchema(protocol, body);
  return {
    ...('schema' in asked && asked.schema ? { outputSchema: asked.schema } : {}),
    protocol,
    path,
    headers,
    body,
    receivedAt: Date.now(),
    aborted: false,
    model: typeof b.model === 'string' ? b.model : undefined,
    toolNames: tools.map((t) => String(asObject(t).name ?? asObject(asObject(t).function).name)),
    messages,
    lastUserText: lastUserText(messages),
    toolResults: resultsOf(messages.slice(lastAssistantIndex(messages) + 1)),
    allToolResults: resultsOf(messages),
    system: systemText(protocol, b, messages),
    factory: systemText(protocol, b, messages).startsWith(FACTORY_PROMPT_MARKER),
  };
}

/** The system prompt: Anthropic's `system` field, or OpenAI's leading system message. */
function systemText(protocol: FakeProtocol, body: Json, messages: unknown[]): string {
  if (protocol === 'anthropic') return textOf(body.system);
  const first = asObject(messages[0]);
  return first.role === 'system' || first.role === 'developer' ? textOf(first.content) : '';
}

function anthropicToolResults(messages: unknown[]): FakeToolResult[] {
  return messages.flatMap((m) => {
    const content = asObject(m).content;
    if (!Array.isArray(content)) return [];
    return content
      .map(asObject)
      .filter((block) => block.type === 'tool_result')
      .map((block) => ({ toolUseId: String(block.tool_use_id), content: textOf(block.content), isError: block.is_error === true }));
  });
}

// Chat Completions has no error flag; the OpenAI adapter marks failed results with an "ERROR: " prefix.
function openaiToolResults(messages: unknown[]): FakeToolResult[] {
  return messages
    .map(asObject)
    .filter((m) => m.role === 'tool')
    .map((m) => {
      const content = textOf(m.content);
      return { toolUseId: String(m.tool_call_id), content, isError: content.startsWith('ERROR: ') };
    });
}

function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = asObject(messages[i]);
    const text = m.role === 'user' ? textOf(m.content) : '';
    if (text) return text;
  }
  return '';
}

function lastAssistantIndex(messages: unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (asObject(messages[i]).role === 'assistant') return i;
  return -1;
}

/** A string content, or the text parts of a content array (both protocols use `{type:'text', text}`). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map(asObject)
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n\n');
}

function asObject(value: unknown): Json {
  return typeof value === 'object' && value !== null ? (value as Json) : {};
}
