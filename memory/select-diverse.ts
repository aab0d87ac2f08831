import { trigramSimilarity, trigrams } from './trigram.ts';

/** A fused candidate: its id, fused score and text. */
export type Candidate = { id: string; score: number; text: string };

export type SelectOptions = {
  limit: number;
  /** Weight of relevance against novelty in maximal marginal relevance (1 = relevance only). */
  lambda?: number;
  /** Trigram similarity to an entry already kept above which a candidate counts as a duplicate and is dropped. */
  duplicateAbove?: number;
};

/**
 * Maximal marginal relevance over trigram similarity: keeps up to `limit` candidates, each time the one whose
 * relevance (fused score, min-max scaled) minus its similarity to those already kept is highest; near-duplicates go.
 */
export function selectDiverse(candidates: readonly Candidate[], opts: SelectOptions): Candidate[] {
  const lambda = opts.lambda ?? 0.75;
  const duplicateAbove = opts.duplicateAbove ?? 0.8;
  const scores = candidates.map((c) => c.score);
  const [lo, hi] = [Math.min(...scores), Math.max(...scores)];
  const pool = candidates.map((c) => ({ c, rel: hi > lo ? (c.score - lo) / (hi - lo) : 1, grams: trigrams(c.text) }));
  const kept: typeof pool = [];
  while (kept.length < opts.limit && pool.length > 0) {
    let best = -1;
    let bestValue = -Infinity;
    for (let i = 0; i < pool.length; i++) {
      const p = pool[i]!;
      const redundancy = Math.max(0, ...kept.map((k) => trigramSimilarity(p.grams, k.grams)));
      if (redundancy > duplicateAbove) continue;
      const value = lambda * p.rel - (1 - lambda) * redundancy;
      if (value > bestValue) [best, bestValue] = [i, value];
    }
    if (best < 0) break;
    kept.push(...pool.splice(best, 1));
  }
  return kept.map((k) => k.c);
}
