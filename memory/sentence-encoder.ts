import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LocalEncoder } from './local-encoder.ts';
import type { EncoderReply, EncoderRequest } from './sentence-encoder-thread.ts';

/** The thread's module, run by Node as the rest of the tree is (type stripping, no build step). */
const THREAD_MODULE = new URL('./sentence-encoder-thread.ts', import.meta.url);

/**
 * Sentence vectors on this machine (all-MiniLM-L6-v2: the model's token states mean-pooled over the text's tokens and
 * normalised, 384 dimensions), computed on one worker thread of the process, started by the first call and loading
 * the model once: the model blocks the thread it runs on for tens of ms a batch, and the API, the worker, cancels and
 * event streams share the main thread's loop. A thread that dies rejects what waited on it; the next call starts
 * another.
 */
export function createSentenceEncoder(opts: { modelDir: string }): LocalEncoder {
  let current: Promise<EncoderThread> | undefined;
  const thread = () => {
    if (!current) {
      const starting = startThread(opts.modelDir, () => {
        if (current === starting) current = undefined;
      });
      current = starting;
    }
    return current;
  };
  return {
    model: `sentence-encoder:${basename(opts.modelDir)}`,
    async ready() {
      await thread();
    },
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      signal?.throwIfAborted();
      const started = await abortable(thread(), signal);
      return started.encode(texts, signal);
    },
  };
}

type EncoderThread = { encode(texts: string[], signal?: AbortSignal): Promise<number[][]> };
type Waiting = { texts: number; resolve: (v: number[][]) => void; reject: (e: Error) => void };

/** A thread with the model loaded; `gone` is called once it has stopped, for whatever reason. */
function startThread(modelDir: string, gone: () => void): Promise<EncoderThread> {
  // The thread inherits the process's flags, but `--input-type` (a `node -e` parent's) refuses a module file; the
  // flags are listed only then, since a list may not hold V8's heap flags (`wiring/worker-process.ts`).
  const evalFlag = (a: string) => a.startsWith('--input-type');
  const execArgv = process.execArgv.some(evalFlag) ? process.execArgv.filter((a) => !evalFlag(a)) : undefined;
  const worker = new Worker(THREAD_MODULE, { workerData: { modelDir }, name: 'sentence-encoder', execArgv });
  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  let crash: Error | undefined;
  // Referenced only while a call waits on it: an idle thread never keeps the process from exiting.
  const hold = () => (waiting.size > 0 ? worker.ref() : worker.unref());
  const send = (m: EncoderRequest) => worker.postMessage(m);
  const encoder: EncoderThread = {
    encode(texts, signal) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const abort = () => {
          // Rejected now; a batch the thread has begun may finish, its vectors dropped.
          waiting.delete(id);
          send({ type: 'cancel', id });
          hold();
          reject(signal!.reason as Error);
        };
        const settled =
          <T>(f: (v: T) => void) =>
          (v: T) => {
            signal?.removeEventListener('abort', abort);
            f(v);
          };
        waiting.set(id, { texts: texts.length, resolve: settled(resolve), reject: settled(reject) });
        signal?.addEventListener('abort', abort, { once: true });
        send({ type: 'encode', id, texts });
        hold();
      });
    },
  };
  return new Promise((resolve, reject) => {
    worker.on('message', (m: EncoderReply) => {
      if (m.type === 'ready') {
        hold();
        resolve(encoder);
      } else if (m.type === 'failed') reject(new Error(`the sentence encoder could not load ${modelDir}: ${m.message}`));
      else {
        const w = waiting.get(m.id);
        if (!w) return;
        waiting.delete(m.id);
        hold();
        if (m.type === 'error') w.reject(new Error(`the sentence encoder failed: ${m.message}`));
        else w.resolve(rows(m.vectors, w.texts));
      }
    });
    worker.on('error', (err) => (crash = err));
    worker.on('exit', (code) => {
      gone();
      const err = new Error(
        `the sentence encoder's thread stopped (${crash ? crash.message : `exit code ${code}`}); the next call starts a new one`,
        { cause: crash },
      );
      reject(err);
      for (const w of waiting.values()) w.reject(err);
      waiting.clear();
    });
  });
}

/** `n` vectors laid end to end, as the arrays callers take. */
function rows(vectors: Float64Array, n: number): number[][] {
  const dims = vectors.length / n;
  return Array.from({ length: n }, (_, i) => Array.from(vectors.subarray(i * dims, (i + 1) * dims)));
}

/** `p`, or the signal's reason as soon as it aborts (the wait is given up, not what it waits for). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
