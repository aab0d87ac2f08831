import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { classifyStreamError, malformedResponse } from './classify-error.ts';
import { fetchResendingReset } from './resend-reset.ts';
import { toOpenAIMessages } from './openai-messages.ts';
import type { ModelClient, ModelRequest, ModelResponse, StopReason, TextBlock, ToolUseBlock } from './model-types.ts';

/**
 * Options of the Chat Completions adapter; the SDK appends `/chat/completions` to `baseUrl` (so pass `.../v1`).
 * `maxTokensField` defaults to OpenAI's `max_completion_tokens`; many compatible servers only know `max_tokens`.
 */
export type OpenAIClientOptions = {
  baseUrl?: string;
  apiKey: string;
  timeoutMs?: number;
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
};

/** The name a mission's output schema goes by in `response_format` (the API requires one). */
const OUTPUT_SCHEMA_NAME = 'mission_output';

// Above the activity's 180 s limit so the activity, not the SDK, decides when a call has taken too long.
const DEFAULT_TIMEOUT_MS = 300_000;

/** A ModelClient over the official OpenAI SDK (Chat Completions), one HTTP request per call (streamed when text is wanted live). */
export function createOpenAIClient(options: OpenAIClientOptions): ModelClient {
  const sdk = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: 0,
    fetch: fetchResendingReset,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const maxTokensField = options.maxTokensField ?? 'max_completion_tokens';
  return {
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const params: ChatCompletionCreateParamsNonStreaming = {
        model: request.model,
        [maxTokensField]: request.maxTokens,
        messages: toOpenAIMessages(request.system, request.messages),
        ...(request.tools?.length
          ? {
              tools: request.tools.map((t) => ({
                type: 'function' as const,
                function: { name: t.name, description: t.description, parameters: t.inputSchema },
              })),
            }
          : {}),
        // Not `strict`: strict mode refuses schemas that leave properties optional; the answer is validated anyway.
        ...(request.outputSchema
          ? { response_format: { type: 'json_schema' as const, json_schema: { name: OUTPUT_SCHEMA_NAME, schema: request.outputSchema } } }
          : {}),
      };
      let completion: ChatCompletion;
      let connected = false;
      try {
        const { onText } = request;
        if (onText) {
          // Usage comes only in a last chunk, and only when asked for.
          const streamed = { ...params, stream: true as const, stream_options: { include_usage: true } };
          // The SDK's stream helper parses a `json_schema` answer itself and throws on one that is not JSON: a typed
          // mission's stream is read from the raw chunks instead (connected once the response is there), so such an
          // answer reaches the check and its correction.
          const raw = request.outputSchema ? await sdk.chat.completions.create(streamed, { signal: request.signal }) : undefined;
          connected = raw !== undefined;
          const stream = raw
            ? ChatCompletionStream.fromReadableStream(raw.toReadableStream())
            : sdk.chat.completions.stream(streamed, { signal: request.signal });
          stream.on('connect', () => (connected = true));
          stream.on('content', (delta) => onText(delta));
          completion = await stream.finalChatCompletion();
        } else {
          completion = await sdk.chat.completions.create(params, { signal: request.signal });
        }
      } catch (error) {
        throw classifyStreamError(error, request.signal, 'openai', connected);
      }
      return fromCompletion(completion, request.model);
    },
  };
}

function fromCompletion(completion: unknown, requestedModel: string): ModelResponse {
  const c = (typeof completion === 'object' && completion !== null ? completion : {}) as Partial<ChatCompletion>;
  const choice = Array.isArray(c.choices) ? c.choices[0] : undefined;
  if (!choice?.message) throw malformedResponse('openai', 'no choices[0].message');
  const content: Array<TextBlock | ToolUseBlock> = [];
  if (typeof choice.message.content === 'string' && choice.message.content) {
    content.push({ type: 'text', text: choice.message.content });
  }
  for (const call of choice.message.tool_calls ?? []) {
    if (call.type !== 'function') throw malformedResponse('openai', `unsupported tool call type ${call.type}`);
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) });
  }
  return {
    stopReason: stopReasonOf(
      choice.finish_reason,
      content.some((b) => b.type === 'tool_use'),
    ),
    content,
    // OpenAI caches a prompt's prefix by itself; `prompt_tokens` counts the whole prompt, the cached part within it.
    usage: {
      inputTokens: c.usage?.prompt_tokens ?? 0,
      outputTokens: c.usage?.completion_tokens ?? 0,
      ...(c.usage?.prompt_tokens_details?.cached_tokens ? { cacheReadTokens: c.usage.prompt_tokens_details.cached_tokens } : {}),
    },
    model: typeof c.model === 'string' ? c.model : requestedModel,
  };
}

// Some compatible servers answer "stop" even when they return tool calls; the calls are what matter.
function stopReasonOf(finishReason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (finishReason === 'length') return 'max_tokens';
  if (hasToolCalls || finishReason === 'tool_calls' || finishReason === 'function_call') return 'tool_use';
  return 'end_turn';
}

function parseArguments(raw: string | undefined): Record<string, unknown> {
  // Compatible servers send "" for a call without arguments.
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw malformedResponse('openai', `tool call arguments are not JSON: ${raw.slice(0, 200)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw malformedResponse('openai', 'tool call arguments are not a JSON object');
  }
  return parsed as Record<string, unknown>;
}
