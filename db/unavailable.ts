import pg from 'pg';

// Node socket errors that mean "the server is not there right now"; pg throws them bare (fetch and the provider
// SDKs wrap theirs in errors of their own, so a bare one reaching an activity comes from the database driver).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// SQLSTATEs of a server going away or not accepting yet: admin/crash shutdown, starting up, too many connections.
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
// pg and pg-pool's own messages for a connection lost, or one that could not be had in time.
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * True when `err` says Postgres could not be reached (refused, reset, shut down, restarting, pool timeout), not that
 * a query was wrong: such an error goes away by itself and is worth waiting out.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof pg.DatabaseError) return typeof err.code === 'string' && (err.code.startsWith('08') || SERVER_CODES.has(err.code));
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  // A host name resolving to several addresses fails with one error per address.
  if (err instanceof AggregateError && err.errors.length > 0 && err.errors.every(isDatabaseUnavailable)) return true;
  return DRIVER_MESSAGES.some((re) => re.test(err.message));
}
