import type { IncomingHttpHeaders } from 'node:http';
import type { ModelUsage, StopReason } from '../model/model-types.ts';

export type FakeProtocol = 'anthropic' | 'openai';

/** A successful model turn to send, rendered in whichever protocol the request used. */
export type FakeReply = {
  text?: string;
  /** An answer as JSON: sent as the reply's text, `JSON.stringify`'d (what structured outputs return). */
  json?: unknown;
  toolUses?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  /** Defaults to tool_use when toolUses is non-empty, else end_turn. */
  stopReason?: StopReason;
  /** Defaults to a rough estimate from the request and reply sizes. */
  usage?: ModelUsage;
};

/**
 * How the server answers one request; `delayMs` waits before answering. A reply to a streaming request (`stream: true`)
 * is sent as the protocol's Server-Sent Events, its text in word-sized chunks `chunkDelayMs` apart (default: the
 * server's), and with `cutAfterChunks` the connection drops after that many text chunks (an attempt failing mid-stream).
 */
export type Step =
  | { reply: FakeReply; delayMs?: number; chunkDelayMs?: number; cutAfterChunks?: number }
  /** An HTTP error (or any raw status); without `body`, a protocol-shaped error carrying `message`. */
  | { status: number; headers?: Record<string, string>; body?: unknown; message?: string; delayMs?: number }
  /** A 200 whose JSON body is cut off. */
  | { malformed: true; delayMs?: number }
  /** No answer at all until the client gives up. */
  | { hang: true }
  /** The connection closed at once, no answer (a load balancer's reset, a kept-alive connection closed under the request). */
  | { reset: true };

export type FakeToolResult = { toolUseId: string; content: string; isError: boolean };

/** One request the server received, with protocol-neutral views of its body. */
export type RecordedRequest = {
  protocol: FakeProtocol;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  receivedAt: number;
  finishedAt?: number;
  /** A streamed reply: when its first text chunk was written. */
  firstTextAt?: number;
  /** True when the client disconnected before the reply was sent. */
  aborted: boolean;
  model: string | undefined;
  /** Names of the tools offered; [] when the request had no `tools` field. */
  toolNames: string[];
  /** The raw `messages` array of the body. */
  messages: unknown[];
  /** Text of the most recent user message that has any text ('' if none). */
  lastUserText: string;
  /** Tool results answering the previous assistant turn (the trailing ones of the conversation). */
  toolResults: FakeToolResult[];
  /** Every tool result anywhere in the conversation. */
  allToolResults: FakeToolResult[];
  /** The system prompt's text (Anthropic's `system`, a string or text blocks; OpenAI's leading system message). */
  system: string;
  /** A script factory prompt (its system text opens with FACTORY_PROMPT_MARKER): answered from the factory's queue. */
  factory: boolean;
  /**
   * The JSON Schema the answer was asked to match: Anthropic's `output_config.format.schema` or OpenAI's
   * `response_format.json_schema.schema`. With no step scripted, the answer is a value matching it.
   */
  outputSchema?: Record<string, unknown>;
  /** What the server's prompt cache read and wrote for this request, in tokens (reported in the reply's usage). */
  cache?: { readTokens: number; creationTokens: number };
};

export type StepHandler = (request: RecordedRequest) => Step | Promise<Step>;

/** A scripted model server speaking the Anthropic Messages and OpenAI Chat Completions protocols. */
export type FakeModelServer = {
  /** e.g. http://127.0.0.1:PORT, the Anthropic SDK base URL. */
  url: string;
  anthropicBaseUrl: string;
  /** url + '/v1', the OpenAI SDK base URL. */
  openaiBaseUrl: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests currently being answered (delays included). */
  inFlight: number;
  maxInFlight: number;
  /**
   * The provider's own requests-per-minute limit (undefined: none), enforced as the providers do: a bucket of one
   * minute's requests, refilled continuously; a request beyond it gets a 429 with `Retry-After`, counted in `rateLimited`.
   */
  limitRequestsPerMinute(limit: number | undefined): void;
  /** The 429s the limit sent since the start (or the last reset). */
  rateLimited: number;
  /** Queue steps answered in order by the next requests, before any handler. */
  enqueue(...steps: Step[]): void;
  /**
   * Queue the script factory's replies, answered in order by factory prompts only (never by the mission's turns): a
   * string is a script, sent in a fenced code block; a step is sent as it is. With none queued a factory prompt gets a 500.
   */
  enqueueScripts(...steps: Array<string | Step>): void;
  /** Answer requests with this when the queue is empty (default: end_turn "fake answer"). */
  setHandler(handler: StepHandler | undefined): void;
  /** Resolves once `condition` holds, re-checked after every request arrival, reply and abort. */
  waitFor(condition: () => boolean): Promise<void>;
  /** The pause between streamed text chunks when a step names none (default 0). */
  chunkDelayMs: number;
  /** Forget queue, handler, recorded requests and counters. */
  reset(): void;
  /** Stop listening and drop every open connection. */
  close(): Promise<void>;
};
