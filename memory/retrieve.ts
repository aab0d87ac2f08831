import type { Kysely } from 'kysely';
import { getMemories } from '../db/memories.ts';
import { embeddedMemoryIds, keywordRanking, trigramRanking, type MemoryScope } from '../db/memory-search.ts';
import type { Database, MemoryRow, StoredVector } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';
import { reciprocalRankFusion, RRF_K } from './rank-fusion.ts';
import { selectDiverse } from './select-diverse.ts';
import type { VectorSearch } from './vector-search.ts';

/** What retrieval needs: the database, the embeddings client (none: keyword and trigram only) and how vectors are searched. */
export type RetrievalDeps = {
  db: Kysely<Database>;
  embeddings?: EmbeddingsClient | undefined;
  vectors: VectorSearch;
  logger?: Logger;
  /** The fusion's settings; `MEMORY_TUNING` unless a bench sweeps them. */
  tuning?: MemoryTuning | undefined;
};

/**
 * How the embedding ranking joins the fusion: its weight against keyword and trigram (1 each), its cosine floor, and
 * the fusion's rank constant (`RRF_K` flattens ranks so much that a noisy lexical match outweighs the best cosine).
 */
export type MemoryTuning = { embeddingWeight: number; minCosine: number; k: number };

/**
 * Chosen on the tuning halves of the keyword and paraphrase sets with the local encoder (`npm run bench:memory --
 * --sweep`); the held-out halves were not looked at while choosing.
 */
export const MEMORY_TUNING: MemoryTuning = { embeddingWeight: 3, minCosine: 0.2, k: 1 };

/** How many candidates each ranking contributes to the fusion. */
const CANDIDATES = 30;

/** Each retriever's ranking, best first; `embedding` (with cosine scores) only with a working embeddings client. */
export type Rankings = { keyword: string[]; trigram: string[]; embedding?: Array<{ id: string; score: number }> };

/** Each retriever's ranking of the scope's memories for `text`. */
export async function rankMemories(deps: RetrievalDeps, scope: MemoryScope, text: string): Promise<Rankings> {
  const [keyword, trigram, embedding] = await Promise.all([
    keywordRanking(deps.db, scope, text, CANDIDATES),
    trigramRanking(deps.db, scope, text, CANDIDATES),
    embeddingRanking(deps, scope, text),
  ]);
  return { keyword, trigram, ...(embedding ? { embedding } : {}) };
}

/**
 * The rankings fused by weighted reciprocal rank, the embedding ranking cut at its cosine floor; best first. Without
 * an embedding ranking (none configured, or the endpoint failed) keyword and trigram fuse as they always did (`RRF_K`).
 */
export function fuseRankings(ranked: Rankings, tuning: MemoryTuning = MEMORY_TUNING): Array<{ id: string; score: number }> {
  const embedding = ranked.embedding?.filter((e) => e.score > tuning.minCosine).map((e) => e.id);
  return reciprocalRankFusion([ranked.keyword, ranked.trigram, ...(embedding ? [embedding] : [])], embedding ? tuning.k : RRF_K, [
    1,
    1,
    tuning.embeddingWeight,
  ]).slice(0, CANDIDATES);
}

/** Maximal marginal relevance over the fused candidates whose rows are known: at most `limit`, best first. */
export function selectMemories(fused: Array<{ id: string; score: number }>, rows: Map<string, MemoryRow>, limit: number): MemoryRow[] {
  const candidates = fused.flatMap((f) => {
    const row = rows.get(f.id);
    return row ? [{ ...f, text: row.content }] : [];
  });
  return selectDiverse(candidates, { limit }).map((c) => rows.get(c.id)!);
}

/**
 * Hybrid retrieval: full-text and trigram rankings (plus embeddings when configured) fused by reciprocal rank,
 * then maximal marginal relevance keeps at most `limit` relevant, non-redundant memories, best first.
 */
export async function retrieveMemories(deps: RetrievalDeps, scope: MemoryScope, text: string, limit = 5): Promise<MemoryRow[]> {
  const fused = fuseRankings(await rankMemories(deps, scope, text), deps.tuning);
  return selectMemories(fused, await rowsById(deps, scope, fused), limit);
}

/** The rows of the memories a ranking names, by id. */
export async function rowsById(deps: RetrievalDeps, scope: MemoryScope, ranked: Array<{ id: string }>): Promise<Map<string, MemoryRow>> {
  const rows = await getMemories(
    deps.db,
    scope.owner,
    ranked.map((f) => f.id),
  );
  return new Map(rows.map((r) => [r.id, r]));
}

async function embeddingRanking(deps: RetrievalDeps, scope: MemoryScope, text: string): Promise<Rankings['embedding']> {
  const embeddings = deps.embeddings;
  if (!embeddings || !text.trim()) return undefined;
  try {
    // Only this encoder's vectors: another model's (one not re-embedded yet) would be compared as if they meant the same.
    // No vector to compare with: the query is not embedded (a local encoder would load for nothing).
    if ((await embeddedMemoryIds(deps.db, scope, embeddings.model, 1)).length === 0) return undefined;
    const [query = []] = await embeddings.embed([text]);
    return await deps.vectors.memories(deps.db, scope, embeddings.model, query, CANDIDATES);
  } catch (err) {
    // Embeddings only add to retrieval: without them keyword and trigram still answer.
    deps.logger?.warn('embeddings unavailable; retrieving by keyword and trigram only', { err: String(err) });
    return undefined;
  }
}

/** The vector of a text to store with a memory, with its encoder; null when no encoder is configured or it fails. */
export async function embedForStorage(deps: Omit<RetrievalDeps, 'vectors' | 'tuning'>, text: string): Promise<StoredVector | null> {
  if (!deps.embeddings) return null;
  try {
    const [vector] = await deps.embeddings.embed([text]);
    return vector ? { model: deps.embeddings.model, vector } : null;
  } catch (err) {
    deps.logger?.warn('embeddings unavailable; memory stored without a vector', { err: String(err) });
    return null;
  }
}
