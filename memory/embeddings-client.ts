/**
 * Vectors for texts; one vector per text, in order. `model` names the encoder (`endpoint:<model>`,
 * `sentence-encoder:<model dir>`, `word-vectors:<name>`): it is stored beside every vector, and only vectors of the same
 * model are ever compared (two models of one width give vectors of one length that mean different things).
 */
export type EmbeddingsClient = { readonly model: string; embed(texts: string[], signal?: AbortSignal): Promise<number[][]> };

const TIMEOUT_MS = 15_000;

/** A client of an OpenAI-compatible `POST <base>/embeddings` endpoint (OpenAI, vLLM, Ollama, LiteLLM…). */
export function createEmbeddingsClient(opts: { baseUrl: string; apiKey: string | undefined; model: string }): EmbeddingsClient {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/embeddings`;
  return {
    model: `endpoint:${opts.model}`,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
        body: JSON.stringify({ model: opts.model, input: texts }),
        signal: AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), ...(signal ? [signal] : [])]),
      });
      if (!res.ok) throw new Error(`embeddings endpoint answered HTTP ${res.status}`);
      const body = (await res.json()) as { data?: Array<{ index?: number; embedding?: unknown }> };
      const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (data.length !== texts.length || data.some((d) => !Array.isArray(d.embedding)))
        throw new Error('embeddings endpoint gave a malformed answer');
      return data.map((d) => d.embedding as number[]);
    },
  };
}

/** Cosine similarity of two vectors (0 when either is empty or their lengths differ). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length === 0 || a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
