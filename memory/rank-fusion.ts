/** The constant of reciprocal rank fusion (Cormack et al. 2009): damps the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion: each ranking (ids, best first) adds 1/(k + rank) to an id's score. Rankings on
 * incomparable scales (ts_rank, trigram similarity, cosine) fuse without calibration. Best first; equal scores
 * (ranks 1 and 2 against 2 and 1) go to the better single rank, then to the earlier ranking, so results are stable.
 * `weights[i]` (default 1) scales ranking i's contributions.
 */
export function reciprocalRankFusion(
  rankings: readonly (readonly string[])[],
  k = RRF_K,
  weights: readonly number[] = [],
): Array<{ id: string; score: number }> {
  const entries = new Map<string, { score: number; best: number; list: number }>();
  rankings.forEach((ranking, list) =>
    ranking.forEach((id, rank) => {
      const e = entries.get(id) ?? { score: 0, best: Infinity, list };
      e.score += (weights[list] ?? 1) / (k + rank + 1);
      if (rank < e.best) [e.best, e.list] = [rank, list];
      entries.set(id, e);
    }),
  );
  return [...entries]
    .sort(([, a], [, b]) => b.score - a.score || a.best - b.best || a.list - b.list)
    .map(([id, e]) => ({ id, score: e.score }));
}
