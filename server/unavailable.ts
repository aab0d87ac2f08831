import { isDatabaseBusy, isDatabaseUnavailable } from '../db/connection-errors.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';

/**
 * Which backing service an error says is unreachable or too busy to answer now, if any: the client should retry later,
 * it did nothing wrong.
 */
export function unavailableService(err: unknown): 'database' | 'Temporal' | 'busy database' | undefined {
  if (isTemporalUnavailable(err)) return 'Temporal';
  // Busy first: the pool's wait running out is also among the unavailable ones (activities wait both out alike).
  if (isDatabaseBusy(err)) return 'busy database';
  if (isDatabaseUnavailable(err)) return 'database';
  return undefined;
}
