import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession as Session } from 'onnxruntime-node';
import { lazyEncoder, type LocalEncoder } from './local-encoder.ts';

/** What the model was trained on: longer texts are cut (the start of a memory says what it is about). */
const MAX_TOKENS = 256;
/** Texts run through the model together, padded to the longest; more costs memory and gains little on two cores. */
const BATCH = 16;

/**
 * Sentence vectors on this machine: the model's token states mean-pooled over the text's tokens and normalised, as the
 * model was trained to be used (384 dimensions). The model loads on the first call; it runs on one thread, beside the
 * mission work.
 */
export function createSentenceEncoder(opts: { modelDir: string }): LocalEncoder {
  return lazyEncoder(
    `sentence-encoder:${basename(opts.modelDir)}`,
    () => loadEncoder(opts.modelDir),
    async (encoder, texts, signal) => {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        signal?.throwIfAborted();
        out.push(...(await encoder.encode(texts.slice(i, i + BATCH))));
      }
      return out;
    },
  );
}

type Encoder = { encode(texts: string[]): Promise<number[][]> };

async function loadEncoder(modelDir: string): Promise<Encoder> {
  const read = (f: string) => JSON.parse(readFileSync(join(modelDir, f), 'utf8')) as object;
  const tokenizer = new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
  const sep = tokenizer.encode('').ids.at(-1);
  // Imported here: the native binding loads only in a process that embeds.
  const ort = await import('onnxruntime-node');
  const session: Session = await ort.InferenceSession.create(join(modelDir, 'model.onnx'), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  return {
    async encode(texts) {
      const encoded = texts.map((t) => tokenizer.encode(t.slice(0, MAX_TOKENS * 8)).ids.slice(0, MAX_TOKENS));
      // The tokenizer adds [CLS] … [SEP]; a cut text keeps its [SEP] last, as the model saw in training.
      for (const ids of encoded) if (ids.length === MAX_TOKENS && sep !== undefined) ids[MAX_TOKENS - 1] = sep;
      const n = texts.length;
      const width = Math.max(...encoded.map((ids) => ids.length));
      const ids = new BigInt64Array(n * width);
      const mask = new BigInt64Array(n * width);
      for (const [row, tokens] of encoded.entries())
        for (const [col, id] of tokens.entries()) {
          ids[row * width + col] = BigInt(id);
          mask[row * width + col] = 1n;
        }
      const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
        input_ids: new ort.Tensor('int64', ids, [n, width]),
        attention_mask: new ort.Tensor('int64', mask, [n, width]),
      };
      if (session.inputNames.includes('token_type_ids'))
        feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(n * width), [n, width]);
      const result = await session.run(feeds);
      const states = result[session.outputNames[0]!]!;
      const data = states.data as Float32Array;
      const dims = states.dims.at(-1)!;
      return encoded.map((tokens, row) => meanPooled(data, row, width, dims, tokens.length));
    },
  };
}

/** The mean of one text's token states (its padding left out), as a unit vector. */
function meanPooled(data: Float32Array, row: number, width: number, dims: number, length: number): number[] {
  const v = new Float64Array(dims);
  for (let t = 0; t < length; t++) {
    const at = (row * width + t) * dims;
    for (let d = 0; d < dims; d++) v[d]! += data[at + d]!;
  }
  const norm = Math.hypot(...v) || 1;
  return Array.from(v, (x) => x / norm);
}
