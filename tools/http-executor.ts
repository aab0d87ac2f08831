import { context, propagation } from '@opentelemetry/api';
import type { ErrorObject } from 'ajv';
import { Agent, fetch, Headers } from 'undici';
import type { HttpToolDefinition } from './app-definition.ts';
import { fillTemplate } from './env-template.ts';

/** A tool's reply to one try: a result, or an error that is data the model sees (the workflow keeps its own `ToolOutcome`). */
export type ToolReply = { ok: true; result: unknown } | { ok: false; error: string; status?: number };

/**
 * Options of one tool call; `env` (default `process.env`) fills `${NAME}` in the URL and header values, and
 * `providerKeys` (resolved by the tool activity at call time) fills `${provider.<id>}`.
 */
export type HttpToolOptions = {
  signal?: AbortSignal;
  idempotencyKey?: string;
  env?: Record<string, string | undefined>;
  providerKeys?: ReadonlyMap<string, string>;
};

/** The tool server could not be reached or the connection broke: transient, so the retry policy should retry. */
export class ToolTransportError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ToolTransportError';
  }
}

const EXCERPT_CHARS = 300;

// Tool calls wait as long as the tool's own `timeout_s` (up to 600 s) and no longer: the abort signal below is the
// only deadline. fetch's default dispatcher would end a call after 300 s without response headers (or 300 s between
// two body chunks), whatever the tool allows.
const toolDispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

/**
 * POSTs the JSON input to the tool's URL and returns its JSON (or text) response. Rethrows `opts.signal.reason`
 * when the caller aborts, and throws ToolTransportError on network failures; everything else is a ToolReply.
 */
export async function executeHttpTool(tool: HttpToolDefinition, input: unknown, opts: HttpToolOptions = {}): Promise<ToolReply> {
  opts.signal?.throwIfAborted();
  if (!tool.validateInput(input)) {
    return { ok: false, error: `input does not match the tool schema: ${formatAjvErrors(tool.validateInput.errors)}` };
  }
  const values = { env: opts.env ?? process.env, ...(opts.providerKeys ? { providerKeys: opts.providerKeys } : {}) };
  const url = fillTemplate(tool.http.url, values);
  if (!url.ok) return { ok: false, error: `missing secret ${url.missing}` };
  if (!isHttpUrl(url.value)) return { ok: false, error: `tool URL is not an http(s) URL once filled from the environment` };
  const headers = new Headers();
  for (const [name, template] of Object.entries(tool.http.headers)) {
    const value = fillTemplate(template, values);
    if (!value.ok) return { ok: false, error: `missing secret ${value.missing}` };
    try {
      headers.set(name, value.value);
    } catch {
      // The runtime's message quotes the value, which may hold a key.
      return { ok: false, error: `header ${name} is not a valid header value once filled` };
    }
  }
  headers.set('content-type', 'application/json');
  if (opts.idempotencyKey !== undefined) headers.set('idempotency-key', opts.idempotencyKey);
  // The tool call's trace context as W3C `traceparent` (nothing when tracing is off: the API's propagator is a no-op).
  propagation.inject(context.active(), headers, { set: (carrier, name, value) => carrier.set(name, value) });

  const timeout = AbortSignal.timeout(tool.timeoutS * 1000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const response = await fetch(url.value, {
      method: tool.http.method,
      headers,
      body: JSON.stringify(input),
      signal,
      dispatcher: toolDispatcher,
    });
    // A tool server that echoes its credentials must not carry them into the transcript.
    const text = redact(await response.text(), opts.providerKeys);
    if (!response.ok) {
      return { ok: false, status: response.status, error: `HTTP ${response.status}: ${text.slice(0, EXCERPT_CHARS)}` };
    }
    return { ok: true, result: parseJsonOrText(text) };
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (timeout.aborted) return { ok: false, error: `timed out after ${tool.timeoutS}s` };
    // The URL is not echoed: it may have been filled from a secret.
    throw new ToolTransportError(`${tool.qualifiedName}: request failed: ${describeNetworkError(err)}`, { cause: err });
  }
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string {
  const described = (errors ?? []).slice(0, 5).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params.additionalProperty)}'` : '';
    return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra}`;
  });
  return described.join('; ') || 'invalid input';
}

/** `text` with every provider key it contains replaced by `[redacted]`. */
export function redact(text: string, keys: ReadonlyMap<string, string> | undefined): string {
  let out = text;
  for (const key of keys?.values() ?? []) if (key.length >= 4) out = out.replaceAll(key, '[redacted]');
  return out;
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// fetch reports "fetch failed" and keeps the useful part (ECONNREFUSED, ENOTFOUND, reset) in `cause`.
function describeNetworkError(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return code && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
}
