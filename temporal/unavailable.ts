import { isGrpcServiceError } from '@temporalio/client';

/** gRPC status codes of a Temporal frontend that is down, unreachable or too slow to answer within the deadline. */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/** True for a Temporal call that failed because the server could not be reached or did not answer in time. */
export function isTemporalUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED)) return true;
    // Connection.connect() before any call: "Failed to connect before the deadline".
    if (e instanceof Error && e.name === 'TransportError') return true;
  }
  return false;
}
