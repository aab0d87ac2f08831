import type { Kysely } from 'kysely';
import { memoriesToEmbed, setMemoryEmbedding } from '../db/memories.ts';
import type { Database, StoredVector } from '../db/schema.ts';
import { chunksToEmbed, setChunkEmbedding } from '../db/skill-discovery.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';

const BATCH = 32;

/** One kind of stored vector: the next rows another encoder (or none) made, and how one row's vector is replaced. */
type Stored<R> = {
  what: string;
  next(db: Kysely<Database>, model: string, limit: number): Promise<R[]>;
  text(row: R): string;
  set(db: Kysely<Database>, row: R, embedding: StoredVector): Promise<void>;
};

const MEMORIES: Stored<{ id: string; content: string }> = {
  what: 'memories',
  next: memoriesToEmbed,
  text: (r) => r.content,
  set: (db, r, e) => setMemoryEmbedding(db, r.id, e),
};
const CHUNKS: Stored<Parameters<typeof setChunkEmbedding>[1]> = {
  what: 'skill chunks',
  next: chunksToEmbed,
  text: (r) => r.text,
  set: setChunkEmbedding,
};

/**
 * Gives every memory and skill chunk a vector from `embeddings`: those stored without one and those another encoder
 * made, recognised by the encoder's recorded name (`embeddings.model`), not by the vector's length: two models of the
 * same width must not be compared. Run once by each worker process at start, in the background; a second process doing
 * the same meanwhile only repeats work. Stops at the first failure (the next start tries again) and when `signal`
 * aborts. Returns how many vectors it replaced. With nothing to redo, the encoder is not even loaded.
 */
export async function reembedStoredVectors(
  deps: { db: Kysely<Database>; embeddings: EmbeddingsClient; logger: Logger },
  signal: AbortSignal,
): Promise<number> {
  let done = 0;
  for (const kind of [MEMORIES, CHUNKS] as Stored<unknown>[]) {
    const { replaced, finished } = await reembed(deps, kind, signal);
    done += replaced;
    if (!finished) break;
  }
  return done;
}

/** How many of one kind it re-embedded, and whether it got through them all (not stopped by a failure or an abort). */
async function reembed<R>(
  deps: { db: Kysely<Database>; embeddings: EmbeddingsClient; logger: Logger },
  kind: Stored<R>,
  signal: AbortSignal,
): Promise<{ replaced: number; finished: boolean }> {
  const model = deps.embeddings.model;
  let done = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      const rows = await kind.next(deps.db, model, BATCH);
      if (rows.length === 0) break;
      const vectors = await deps.embeddings.embed(rows.map(kind.text), signal);
      for (const [i, row] of rows.entries()) await kind.set(deps.db, row, { model, vector: vectors[i]! });
      done += rows.length;
    }
    if (done > 0) deps.logger.info(`${kind.what} re-embedded for the current encoder`, { [kind.what]: done, model });
    return { replaced: done, finished: true };
  } catch (err) {
    if (!signal.aborted) deps.logger.warn(`re-embedding ${kind.what} stopped; the next start goes on`, { done, err: String(err) });
    return { replaced: done, finished: false };
  }
}
