import type { ModelPrice } from '../config/config.ts';
import type { ModelUsage } from './model-types.ts';

/**
 * The cost in USD of one model call from the price table; 0 for a model the table does not price. The prompt's tokens
 * read from or written to the cache are billed at the cache rates (the input rate where the table gives none).
 */
export function callCostUsd(
  prices: Readonly<Record<string, Readonly<ModelPrice>>>,
  modelIds: Array<string | undefined>,
  usage: ModelUsage,
): number {
  // The requested id first, then the id the provider reports (often a dated variant of it).
  const price = modelIds.map((id) => (id ? prices[id] : undefined)).find((p) => p !== undefined);
  if (!price) return 0;
  const read = usage.cacheReadTokens ?? 0;
  const written = usage.cacheCreationTokens ?? 0;
  const full = Math.max(0, usage.inputTokens - read - written);
  return (
    (full * price.inputPerMTok +
      read * (price.cacheReadPerMTok ?? price.inputPerMTok) +
      written * (price.cacheWritePerMTok ?? price.inputPerMTok) +
      usage.outputTokens * price.outputPerMTok) /
    1_000_000
  );
}
