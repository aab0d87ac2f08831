import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ModelCallError } from './model-types.ts';
import { retryAfterFromHeaders } from './retry-after.ts';

type ApiError = InstanceType<typeof Anthropic.APIError> | InstanceType<typeof OpenAI.APIError>;

/**
 * What a provider call should throw for `error`: the abort reason unchanged when `signal` was aborted
 * (the activity reports that as cancellation), otherwise a classified ModelCallError.
 */
export function classifyModelError(error: unknown, signal: AbortSignal | undefined, provider: string): unknown {
  if (signal?.aborted) return signal.reason;
  if (error instanceof ModelCallError) return error;
  if (error instanceof Anthropic.APIConnectionError || error instanceof OpenAI.APIConnectionError) {
    return new ModelCallError(`${provider} connection failed: ${describeCause(error)}`, { retryable: true, kind: 'network' });
  }
  if (error instanceof Anthropic.APIError || error instanceof OpenAI.APIError) return fromStatus(error, provider);
  if (error instanceof SyntaxError) {
    return new ModelCallError(`${provider} returned a malformed body: ${error.message}`, { retryable: true, kind: 'malformed' });
  }
  // fetch reports a connection dropped while reading the body as a TypeError ("terminated").
  if (error instanceof TypeError) {
    return new ModelCallError(`${provider} connection failed: ${describeCause(error)}`, { retryable: true, kind: 'network' });
  }
  // SDK-side refusals (bad options, "streaming required") will fail the same way again.
  if (error instanceof Anthropic.AnthropicError || error instanceof OpenAI.OpenAIError) {
    return new ModelCallError(`${provider} client error: ${error.message}`, { retryable: false, kind: 'client_error' });
  }
  return error;
}

/**
 * What a stream that broke after the provider answered 200 should throw: the SDKs report a dropped connection or a
 * cut-off event as their own generic error (no status, no cause), which would otherwise read as a client refusal.
 */
export function classifyStreamError(error: unknown, signal: AbortSignal | undefined, provider: string, connected: boolean): unknown {
  const classified = classifyModelError(error, signal, provider);
  if (!connected || !(classified instanceof ModelCallError) || classified.kind !== 'client_error' || classified.status !== undefined)
    return classified;
  const message = error instanceof Error ? error.message : String(error);
  return /json/i.test(message)
    ? new ModelCallError(`${provider} streamed a malformed event: ${message}`, { retryable: true, kind: 'malformed' })
    : new ModelCallError(`${provider} stream broke off: ${message}`, { retryable: true, kind: 'network' });
}

/** A retryable error for a 2xx response whose body does not have the protocol's shape. */
export function malformedResponse(provider: string, detail: string): ModelCallError {
  return new ModelCallError(`${provider} returned a malformed response: ${detail}`, { retryable: true, kind: 'malformed' });
}

function fromStatus(error: ApiError, provider: string): ModelCallError {
  const status = error.status;
  const message = `${provider} API error ${status ?? '(no status)'}: ${providerMessage(error)}`;
  const retryAfterMs = retryAfterFromHeaders(error.headers);
  if (status === 429) return new ModelCallError(message, { status, retryable: true, retryAfterMs, kind: 'rate_limited' });
  if (status === undefined || status === 408 || status === 409 || status >= 500) {
    return new ModelCallError(message, { status, retryable: true, retryAfterMs, kind: 'server_error' });
  }
  return new ModelCallError(message, { status, retryable: false, kind: 'client_error' });
}

/** The provider's own error text: Anthropic nests it at `error.error.message`, OpenAI at `error.message` of the parsed `error` field. */
function providerMessage(error: ApiError): string {
  const body: unknown = error.error;
  const nested = pick(pick(body, 'error'), 'message') ?? pick(body, 'message');
  if (typeof nested === 'string' && nested) return nested;
  if (body !== undefined && body !== null) return typeof body === 'string' ? body : JSON.stringify(body);
  return error.message;
}

function pick(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function describeCause(error: Error): string {
  const cause: unknown = error.cause;
  const inner = cause instanceof Error ? `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ''}` : '';
  return inner ? `${error.message} ${inner}` : error.message;
}
