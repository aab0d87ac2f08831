import Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageCreateParamsNonStreaming, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { classifyStreamError, malformedResponse } from './classify-error.ts';
import { fetchResendingReset } from './resend-reset.ts';
import type {
  ChatMessage,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelUsage,
  StopReason,
  TextBlock,
  ToolUseBlock,
} from './model-types.ts';

/** Options of the Anthropic Messages API adapter; the SDK appends `/v1/messages` to `baseUrl`. */
export type AnthropicClientOptions = { baseUrl?: string; apiKey: string; timeoutMs?: number; promptCaching?: boolean };

// Above the activity's 180 s limit so the activity, not the SDK, decides when a call has taken too long.
const DEFAULT_TIMEOUT_MS = 300_000;

/** A ModelClient over the official Anthropic SDK, one HTTP request per call (a Messages stream when text is wanted live). */
export function createAnthropicClient(options: AnthropicClientOptions): ModelClient {
  const sdk = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: 0,
    fetch: fetchResendingReset,
    // An explicit timeout also stops the SDK refusing large max_tokens as "streaming required".
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const caching = options.promptCaching !== false;
  return {
    async complete(request: ModelRequest): Promise<ModelResponse> {
      let message: Message;
      let connected = false;
      try {
        const { onText } = request;
        if (onText) {
          const stream = sdk.messages.stream(toParams(request, caching), { signal: request.signal });
          stream.on('connect', () => (connected = true));
          stream.on('text', (delta) => onText(delta));
          message = await stream.finalMessage();
        } else {
          message = await sdk.messages.create(toParams(request, caching), { signal: request.signal });
        }
      } catch (error) {
        throw classifyStreamError(error, request.signal, 'anthropic', connected);
      }
      return fromMessage(message, request.model);
    },
  };
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * The request. With caching, `cache_control` breakpoints (4 at most, the provider's limit) mark the stable prefix: the
 * last tool, the system prompt, the user message the previous call ended with and the one this call ends with, so the
 * next call reads everything up to its own previous message from the cache. The prefix is byte-stable: the same tools
 * in the same order, a system prompt frozen at prepare, the transcript read back from Postgres the same way each time.
 */
function toParams(request: ModelRequest, caching: boolean): MessageCreateParamsNonStreaming {
  const tools = (request.tools ?? []).map((t, i, all) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as { type: 'object' },
    ...(caching && i === all.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  const last = request.messages.length - 1;
  // The user message the previous call ended with: two before the last (its reply between them).
  const marked = new Set(caching ? [last, last - 2].filter((i) => i >= 0 && request.messages[i]!.role === 'user') : []);
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: caching ? [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] : request.system } : {}),
    messages: request.messages.map((m, i) => toMessageParam(m, marked.has(i))),
    ...(tools.length ? { tools } : {}),
    // Structured outputs: the answer's text is JSON matching the schema (tool use is unaffected).
    ...(request.outputSchema ? { output_config: { format: { type: 'json_schema' as const, schema: request.outputSchema } } } : {}),
  };
}

function toMessageParam(message: ChatMessage, breakpoint: boolean): MessageParam {
  const last = message.content.length - 1;
  return {
    role: message.role,
    content: message.content.map((block, i) => {
      const mark = breakpoint && i === last ? { cache_control: EPHEMERAL } : {};
      if (block.type === 'text') return { type: 'text', text: block.text, ...mark };
      if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input, ...mark };
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error ? { is_error: true } : {}),
        ...mark,
      };
    }),
  };
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  // Newer reasons folded into the neutral set: a refusal ends the turn; a full context is a length stop.
  refusal: 'end_turn',
  pause_turn: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
};

function fromMessage(message: unknown, requestedModel: string): ModelResponse {
  if (typeof message !== 'object' || message === null) throw malformedResponse('anthropic', 'response is not a JSON object');
  const m = message as Partial<Message>;
  const stopReason = STOP_REASONS[String(m.stop_reason)];
  if (!stopReason) throw malformedResponse('anthropic', `unknown stop_reason ${JSON.stringify(m.stop_reason)}`);
  if (!Array.isArray(m.content)) throw malformedResponse('anthropic', 'content is not an array');
  return {
    stopReason,
    content: m.content.flatMap(toNeutralBlock),
    usage: usageOf(m.usage),
    model: typeof m.model === 'string' ? m.model : requestedModel,
  };
}

// Only text and client tool calls are part of the neutral contract; thinking and server-tool blocks are dropped.
function toNeutralBlock(block: unknown): Array<TextBlock | ToolUseBlock> {
  const b = block as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown };
  if (b?.type === 'text' && typeof b.text === 'string') return [{ type: 'text', text: b.text }];
  if (b?.type !== 'tool_use') return [];
  if (typeof b.id !== 'string' || typeof b.name !== 'string' || typeof b.input !== 'object' || b.input === null || Array.isArray(b.input)) {
    throw malformedResponse('anthropic', 'tool_use block lacks id, name or object input');
  }
  return [{ type: 'tool_use', id: b.id, name: b.name, input: b.input as Record<string, unknown> }];
}

/** Anthropic's `input_tokens` leaves out what the cache read and wrote: the whole prompt is the three together. */
function usageOf(u: Partial<Message['usage']> | undefined): ModelUsage {
  const read = u?.cache_read_input_tokens ?? 0;
  const written = u?.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: (u?.input_tokens ?? 0) + read + written,
    outputTokens: u?.output_tokens ?? 0,
    ...(read ? { cacheReadTokens: read } : {}),
    ...(written ? { cacheCreationTokens: written } : {}),
  };
}
