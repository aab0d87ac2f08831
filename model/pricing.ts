import type { ModelPrice } from '../config/config.ts';

/** The cost in USD of one model call from the price table; 0 for a model the table does not price. */
export function callCostUsd(
  prices: Readonly<Record<string, Readonly<ModelPrice>>>,
  modelIds: Array<string | undefined>,
  usage: { inputTokens: number; outputTokens: number },
): number {
  // The requested id first, then the id the provider reports (often a dated variant of it).
  const price = modelIds.map((id) => (id ? prices[id] : undefined)).find((p) => p !== undefined);
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}
