import type { Kysely } from 'kysely';
import { memoryVectors } from '../db/memory-search.ts';
import type { Database } from '../db/schema.ts';

/** How many vectors a process keeps (20k × 384 dimensions as float32 is about 30 MB). */
const MAX_VECTORS = 20_000;
/** Ids per query when fetching the missing ones. */
const FETCH_CHUNK = 1_000;

/** Each memory's vector with the encoder that made it, by memory id. */
const cache = new Map<string, { model: string; vector: Float32Array }>();

/**
 * The vectors `model` made of these memories, as float32, from this process's cache where it has them. A memory's
 * content never changes, so neither does its vector, except when it is re-embedded for another encoder: a cached
 * vector of another model is fetched again (and left out when the stored one is not `model`'s yet). Oldest entries go
 * first past `MAX_VECTORS`. Before it, every retrieval read every vector in scope (5,000 × 384 numbers) from Postgres.
 */
export async function vectorsOf(db: Kysely<Database>, ids: string[], model: string): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  const missing: string[] = [];
  for (const id of ids) {
    const cached = cache.get(id);
    if (cached?.model === model) out.set(id, cached.vector);
    else missing.push(id);
  }
  for (let i = 0; i < missing.length; i += FETCH_CHUNK)
    for (const row of await memoryVectors(db, missing.slice(i, i + FETCH_CHUNK), model)) {
      const vector = Float32Array.from(row.embedding);
      out.set(row.id, vector);
      cache.delete(row.id);
      cache.set(row.id, { model, vector });
    }
  while (cache.size > MAX_VECTORS) cache.delete(cache.keys().next().value!);
  return out;
}
