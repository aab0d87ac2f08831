import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession as Session } from 'onnxruntime-node';

/** What the model was trained on: longer texts are cut (the start of a memory says what it is about). */
const MAX_TOKENS = 256;

/** The sentence encoder's model loaded: texts in, one unit vector of `dims` numbers per text, end to end in `vectors`. */
export type SentenceModel = { encode(texts: string[]): Promise<Float64Array> };

/**
 * The tokenizer and the ONNX session of all-MiniLM-L6-v2 in `modelDir`. `encode` runs the model on the calling
 * thread, blocking it for the whole batch (onnxruntime-node's `run` is synchronous: microsoft/onnxruntime#19611), so
 * only the encoder's own thread calls it (`sentence-encoder-thread.ts`); the tests compare against it on theirs.
 */
export async function loadSentenceModel(modelDir: string): Promise<SentenceModel> {
  const read = (f: string) => JSON.parse(readFileSync(join(modelDir, f), 'utf8')) as object;
  const tokenizer = new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
  const sep = tokenizer.encode('').ids.at(-1);
  // Imported here: the native binding loads only in a thread that embeds.
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
      const out = new Float64Array(n * dims);
      for (const [row, tokens] of encoded.entries()) meanPooled(data, row, width, dims, tokens.length, out);
      return out;
    },
  };
}

/** The mean of one text's token states (its padding left out), as a unit vector, written at its row of `out`. */
function meanPooled(data: Float32Array, row: number, width: number, dims: number, length: number, out: Float64Array) {
  const v = new Float64Array(dims);
  for (let t = 0; t < length; t++) {
    const at = (row * width + t) * dims;
    for (let d = 0; d < dims; d++) v[d]! += data[at + d]!;
  }
  const norm = Math.hypot(...v) || 1;
  for (let d = 0; d < dims; d++) out[row * dims + d] = v[d]! / norm;
}
