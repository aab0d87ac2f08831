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
/**
 * What node-postgres says when a connection ends under a query, a client is reused after its connection broke, or a
 * new connection's own `connectionTimeoutMillis` ran out before the server answered (`timeout expired`, bare).
 */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly|connection failure|^timeout expired$/i;

/**
 * True when the error (or its cause) means Postgres is unreachable or the connection broke: retry later, not a bug.
 * `throughCauses: false` looks at the error itself only (an AggregateError's members included): activities use it,
 * because pg throws its socket errors bare while fetch, the HTTP tool executor and the provider SDKs wrap theirs,
 * so an unreachable tool or model (a wrapped ECONNREFUSED) is not taken for the database.
 */
export function isDatabaseUnavailable(err: unknown, opts: { throughCauses?: boolean } = {}): boolean {
  const test = (e: object) => {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
    return e instanceof Error && PG_CONNECTION_MESSAGES.test(e.message) && !('severity' in e);
  };
  return some(err, test, 0, opts.throughCauses ?? true);
}

/** SQLSTATE lock_not_available: a statement gave up waiting for a lock (`lock_timeout`, NOWAIT) another holds. */
const LOCK_NOT_AVAILABLE = '55P03';

/** What pg-pool says when none of the process's pooled connections came free within its connection timeout. */
const POOL_WAIT_MESSAGE = /timeout exceeded when trying to connect/i;

/**
 * True when Postgres is reachable but busy: every pooled connection of this process stayed in use for the pool's
 * connection timeout, or a lock wait bounded by `lock_timeout` ran out (the start lock, db/admission.ts). Nothing of the
 * statement was done and the same request can succeed in a moment: retry later, not a bug. Not a serialization failure
 * or a deadlock: those are conflicts of the caller's own transaction, not a queue to wait in.
 */
export function isDatabaseBusy(err: unknown): boolean {
  return some(err, (e) => {
    if ((e as { code?: unknown }).code === LOCK_NOT_AVAILABLE && 'severity' in e) return true;
    return e instanceof Error && POOL_WAIT_MESSAGE.test(e.message) && !('severity' in e);
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

function some(err: unknown, test: (e: object) => boolean, depth = 0, causes = true): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  if (test(err)) return true;
  if (err instanceof AggregateError && err.errors.some((e: unknown) => some(e, test, depth + 1, causes))) return true;
  return causes && some((err as { cause?: unknown }).cause, test, depth + 1);
}
