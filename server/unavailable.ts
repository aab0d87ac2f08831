import { isDatabaseUnavailable } from '../db/connection-errors.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';

/** Which backing service an error says is unreachable, if any: the client should retry later, it did nothing wrong. */
export function unavailableService(err: unknown): 'database' | 'Temporal' | undefined {
  if (isTemporalUnavailable(err)) return 'Temporal';
  if (isDatabaseUnavailable(err)) return 'database';
  return undefined;
}
