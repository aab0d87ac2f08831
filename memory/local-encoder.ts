import type { EmbeddingsClient } from './embeddings-client.ts';

/** A local encoder: an embeddings client whose model can be loaded ahead of the first call (the benches time it). */
export type LocalEncoder = EmbeddingsClient & { ready(): Promise<void> };

/**
 * An encoder over a model that loads on the first call, so a process that never embeds pays nothing. A failed load
 * (files missing, disk full) is retried by the next call rather than remembered.
 */
export function lazyEncoder<M>(
  name: string,
  load: () => Promise<M>,
  encode: (model: M, texts: string[], signal?: AbortSignal) => Promise<number[][]> | number[][],
): LocalEncoder {
  let loading: Promise<M> | undefined;
  const model = () => {
    loading ??= load();
    loading.catch(() => (loading = undefined));
    return loading;
  };
  return {
    model: name,
    async ready() {
      await model();
    },
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const m = await model();
      signal?.throwIfAborted();
      return encode(m, texts, signal);
    },
  };
}
