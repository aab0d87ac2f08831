import type { StopReason } from '../contracts/model.ts';

/** Provider-neutral conversation types (Anthropic-shaped content blocks); adapters translate per provider. */

export type TextBlock = { type: 'text'; text: string };
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
export type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

/** One conversation message; user messages carry text and tool results, assistant messages text and tool uses. */
export type ChatMessage = { role: 'user' | 'assistant'; content: ContentBlock[] };

/** A tool as offered to the model: model-facing name, description and JSON Schema of its input. */
export type ToolSpec = { name: string; description: string; inputSchema: Record<string, unknown> };

/** One model request; `tools` empty or absent means the model is offered no tools at all. */
export type ModelRequest = {
  model: string;
  system: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  maxTokens: number;
  signal?: AbortSignal;
  /**
   * The JSON Schema the answer must match, offered the provider's way (Anthropic's `output_config.format`, OpenAI's
   * `response_format: json_schema`); tool calls stay possible, only the answer's text is constrained.
   */
  outputSchema?: Record<string, unknown>;
  /** The reply's text as it streams in: given, the call uses the provider's streaming API (the response is the same). */
  onText?: (delta: string) => void;
};

export type { StopReason };

/**
 * A call's tokens. `inputTokens` counts the whole prompt; of it, `cacheReadTokens` were read from the provider's prompt
 * cache (billed at its cache-read rate) and `cacheCreationTokens` written to it (Anthropic bills a write above the
 * input rate; OpenAI's cache writes itself and reports none).
 */
export type ModelUsage = { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheCreationTokens?: number };

export type ModelResponse = {
  stopReason: StopReason;
  content: Array<TextBlock | ToolUseBlock>;
  usage: ModelUsage;
  model: string;
};

/** A provider adapter: one HTTP call (streamed when the request asks for its text), no retries of its own. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/**
 * A failed model call, classified for the retry policy. `retryable` false means fail at once;
 * `retryAfterMs` is the provider's Retry-After when it gave one.
 */
export class ModelCallError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly kind: 'rate_limited' | 'server_error' | 'client_error' | 'network' | 'malformed';
  constructor(message: string, opts: { status?: number; retryable: boolean; retryAfterMs?: number; kind: ModelCallError['kind'] }) {
    super(message);
    this.name = 'ModelCallError';
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
    this.kind = opts.kind;
  }
}
