import type { Kysely } from 'kysely';
import { embeddedMemoryIds, nearestMemories, type MemoryScope } from '../db/memory-search.ts';
import type { Owner } from '../db/owner.ts';
import { hasPgvector } from '../db/pgvector.ts';
import type { Database } from '../db/schema.ts';
import { activeChunkVectors, chunkKey, nearestChunks } from '../db/skill-discovery.ts';
import { cosine } from './embeddings-client.ts';
import { vectorsOf } from './vector-cache.ts';

/**
 * How stored vectors are compared with a query's: by pgvector's HNSW indexes inside Postgres, or in this process.
 * Chosen once per process (`chooseVectorSearch`) from what the database has; only vectors of the query's encoder
 * (`model`) are ever compared.
 */
export type VectorSearch = {
  readonly kind: 'pgvector' | 'in-process';
  /** The scope's memories nearest to `query`, best first, at most `k`, each with its cosine. */
  memories(
    db: Kysely<Database>,
    scope: MemoryScope,
    model: string,
    query: number[],
    k: number,
  ): Promise<Array<{ id: string; score: number }>>;
  /** Cosines with `query` of the owner's active skill chunks by `chunkKey`: at least the `k` nearest. */
  chunks(db: Kysely<Database>, owner: Owner, model: string, query: number[], k: number): Promise<Map<string, number>>;
};

/** Embedded memories compared in process, newest first (before pgvector, the only ones retrieval could reach). */
const MAX_IN_PROCESS = 5_000;

/** Vectors read from Postgres and compared here: every chunk of the owner's active skills, the newest memories. */
export const IN_PROCESS_SEARCH: VectorSearch = {
  kind: 'in-process',
  async memories(db, scope, model, query, k) {
    const ids = await embeddedMemoryIds(db, scope, model, MAX_IN_PROCESS);
    const vectors = await vectorsOf(db, ids, model);
    return ids
      .map((id) => ({ id, score: cosine(query, vectors.get(id) ?? []) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
  },
  async chunks(db, owner, model, query) {
    const rows = await activeChunkVectors(db, owner, model);
    return new Map(rows.map((r) => [chunkKey(r), cosine(r.embedding, query)]));
  },
};

/** pgvector's approximate nearest neighbours (HNSW, iterative scan under the owner's filter), in Postgres. */
export const PGVECTOR_SEARCH: VectorSearch = {
  kind: 'pgvector',
  memories: nearestMemories,
  async chunks(db, owner, model, query, k) {
    return new Map((await nearestChunks(db, owner, model, query, k)).map((r) => [chunkKey(r), r.score]));
  },
};

/** pgvector's search when the extension is installed in this database, else comparison in process. */
export async function chooseVectorSearch(db: Kysely<Database>): Promise<VectorSearch> {
  return (await hasPgvector(db)) ? PGVECTOR_SEARCH : IN_PROCESS_SEARCH;
}
