/** Parsing of the provider's retry hints (`Retry-After`, `retry-after-ms`) into milliseconds. */

const DELTA_SECONDS = /^\d+(\.\d+)?$/;

/** Milliseconds to wait per a `Retry-After` value (delta-seconds or HTTP-date); undefined when absent or unusable. */
export function parseRetryAfterMs(headerValue: string | null | undefined, now = Date.now()): number | undefined {
  const value = headerValue?.trim();
  if (!value) return undefined;
  if (DELTA_SECONDS.test(value)) return Math.round(Number(value) * 1000);
  // Date.parse accepts many non-HTTP strings (e.g. "5"), so require a letter, which every HTTP-date has.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  // A date in the past means "retry now", not "no hint".
  return Math.max(0, at - now);
}

/** Milliseconds from a `retry-after-ms` value (a non-negative number of ms); undefined when absent or unusable. */
export function parseRetryAfterMsHeader(headerValue: string | null | undefined): number | undefined {
  const value = headerValue?.trim();
  if (!value || !DELTA_SECONDS.test(value)) return undefined;
  return Math.round(Number(value));
}

/** The retry hint of a response's headers, `retry-after-ms` taking precedence over `Retry-After`. */
export function retryAfterFromHeaders(
  headers: { get(name: string): string | null } | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  return parseRetryAfterMsHeader(headers.get('retry-after-ms')) ?? parseRetryAfterMs(headers.get('retry-after'), now);
}
