import { parentPort, workerData } from 'node:worker_threads';
import { loadSentenceModel, type SentenceModel } from './sentence-model.ts';

/** What the process's thread is asked: encode a request's texts, or forget a request its caller gave up on. */
export type EncoderRequest = { type: 'encode'; id: number; texts: string[] } | { type: 'cancel'; id: number };
/** What the thread answers: the model loaded or not; a request's vectors (`dims` numbers per text, end to end) or error. */
export type EncoderReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'vectors'; id: number; vectors: Float64Array }
  | { type: 'error'; id: number; message: string };

/** Texts run through the model together, padded to the longest; more costs memory and gains little on two cores. */
const BATCH = 16;

type Request = { texts: string[]; done: number; vectors: Float64Array<ArrayBuffer> | undefined };

const port = parentPort!;
const requests = new Map<number, Request>();
// Request ids in turn: each takes one batch, then goes to the back, so a long re-embedding pass and a mission's one
// text share the thread as they shared the main loop before.
const turns: number[] = [];
let model: SentenceModel | undefined;
let draining = false;

port.on('message', (m: EncoderRequest) => {
  if (m.type === 'encode') {
    requests.set(m.id, { texts: m.texts, done: 0, vectors: undefined });
    turns.push(m.id);
    void drain();
  } else requests.delete(m.id);
});

try {
  model = await loadSentenceModel((workerData as { modelDir: string }).modelDir);
  port.postMessage({ type: 'ready' } satisfies EncoderReply);
  void drain();
} catch (err) {
  port.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies EncoderReply);
  port.close();
}

async function drain() {
  if (draining || !model) return;
  draining = true;
  for (let id = turns.shift(); id !== undefined; id = turns.shift()) {
    const request = requests.get(id);
    if (!request) continue;
    try {
      // The model yields to this thread's loop around each batch, so a cancel posted meanwhile is read before the next.
      const batch = await model.encode(request.texts.slice(request.done, request.done + BATCH));
      if (!requests.has(id)) continue;
      const dims = batch.length / Math.min(BATCH, request.texts.length - request.done);
      request.vectors ??= new Float64Array(request.texts.length * dims);
      request.vectors.set(batch, request.done * dims);
      request.done += BATCH;
      if (request.done < request.texts.length) turns.push(id);
      else {
        requests.delete(id);
        // Transferred, not copied: the buffer moves to the main thread.
        port.postMessage({ type: 'vectors', id, vectors: request.vectors } satisfies EncoderReply, [request.vectors.buffer]);
      }
    } catch (err) {
      requests.delete(id);
      port.postMessage({ type: 'error', id, message: err instanceof Error ? err.message : String(err) } satisfies EncoderReply);
    }
  }
  draining = false;
}
