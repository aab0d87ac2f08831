/** Node socket errors that mean the database could not be reached or the connection broke. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** SQLSTATEs of a server that is going away or not accepting connections (class 08, shutdown, too many clients). */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/;
/** What node-postgres says when a connection ends under a query or a client is reused after its connection broke. */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly|connection failure/i;

/** True when the error (or its cause) means Postgres is unreachable or the connection broke: retry later, not a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return some(err, (e) => {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
    return e instanceof Error && PG_CONNECTION_MESSAGES.test(e.message) && !('severity' in e);
  });
}

/**
 * True when a query failed because its pooled connection was already dead (the server restarted or cut it):
 * nothing of the query ran, so it can be sent again on a fresh connection.
 */
export function isDeadConnection(err: unknown): boolean {
  return some(err, (e) => {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === '57P01' || code === '57P02') return true;
    return e instanceof Error && /Connection terminated unexpectedly|not queryable/i.test(e.message);
  });
}

function some(err: unknown, test: (e: object) => boolean, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  if (test(err)) return true;
  if (err instanceof AggregateError && err.errors.some((e: unknown) => some(e, test, depth + 1))) return true;
  return some((err as { cause?: unknown }).cause, test, depth + 1);
}
