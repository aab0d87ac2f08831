import Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageCreateParamsNonStreaming, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { classifyStreamError, malformedResponse } from './classify-error.ts';
import type { ChatMessage, ModelClient, ModelRequest, ModelResponse, StopReason, TextBlock, ToolUseBlock } from './model-types.ts';

/** Options of the Anthropic Messages API adapter; the SDK appends `/v1/messages` to `baseUrl`. */
export type AnthropicClientOptions = { baseUrl?: string; apiKey: string; timeoutMs?: number };

// Above the activity's 180 s limit so the activity, not the SDK, decides when a call has taken too long.
const DEFAULT_TIMEOUT_MS = 300_000;

/** A ModelClient over the official Anthropic SDK, one HTTP request per call (a Messages stream when text is wanted live). */
export function createAnthropicClient(options: AnthropicClientOptions): ModelClient {
  const sdk = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: 0,
    // An explicit timeout also stops the SDK refusing large max_tokens as "streaming required".
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return {
    async complete(request: ModelRequest): Promise<ModelResponse> {
      let message: Message;
      let connected = false;
      try {
        const { onText } = request;
        if (onText) {
          const stream = sdk.messages.stream(toParams(request), { signal: request.signal });
          stream.on('connect', () => (connected = true));
          stream.on('text', (delta) => onText(delta));
          message = await stream.finalMessage();
        } else {
          message = await sdk.messages.create(toParams(request), { signal: request.signal });
        }
      } catch (error) {
        throw classifyStreamError(error, request.signal, 'anthropic', connected);
      }
      return fromMessage(message, request.model);
    },
  };
}

function toParams(request: ModelRequest): MessageCreateParamsNonStreaming {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages.map(toMessageParam),
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema as { type: 'object' },
          })),
        }
      : {}),
  };
}

function toMessageParam(message: ChatMessage): MessageParam {
  return {
    role: message.role,
    content: message.content.map((block) => {
      if (block.type === 'text') return { type: 'text', text: block.text };
      if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error ? { is_error: true } : {}),
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
    usage: { inputTokens: m.usage?.input_tokens ?? 0, outputTokens: m.usage?.output_tokens ?? 0 },
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
