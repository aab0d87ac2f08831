import { isGrpcServiceError } from '@temporalio/client';

/**
 * gRPC status codes of a Temporal frontend that is down, unreachable or too slow to answer within the deadline.
 * CANCELLED ("Call cancelled") too: 2 of 10,000 starts came back so from the overloaded cluster in cluster-scale, and
 * the API answered them with a 500, though whether they started was as unknown as after a deadline (the start settler
 * decides it) and the client was owed a 503 with Retry-After.
 */
const UNAVAILABLE_CODES = new Set([
  14, // UNAVAILABLE
  4, // DEADLINE_EXCEEDED
  1, // CANCELLED
]);

/** True for a Temporal call that failed because the server could not be reached or did not answer in time. */
export function isTemporalUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && UNAVAILABLE_CODES.has(e.code)) return true;
    // Connection.connect() before any call: "Failed to connect before the deadline".
    if (e instanceof Error && e.name === 'TransportError') return true;
  }
  return false;
}
