import type { Kysely } from 'kysely';
import { getMemories } from '../db/memories.ts';
import { memoryCandidates } from '../db/memory-candidates.ts';
import type { MemoryScope } from '../db/memory-search.ts';
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

/**
 * The rankings with the rows they name, the scope's totals (the user's saved facts, missions' completion memories) and
 * the ids of its newest saved facts no ranking named (their rows in `rows` too), as many as asked.
 */
export type RankedMemories = Rankings & { rows: Map<string, MemoryRow>; totals: { saved: number; missions: number }; newest: string[] };

/**
 * Each retriever's ranking of the scope's memories for `text`, with their rows. Under pgvector one statement answers
 * all three rankings for an owner with up to EXACT_UP_TO embedded memories (the query is embedded first); a larger
 * owner's vectors are searched through the HNSW index after it, and in process the vectors are compared after it.
 */
export async function rankMemories(deps: RetrievalDeps, scope: MemoryScope, text: string, newest = 0): Promise<RankedMemories> {
  const embeddings = deps.embeddings;
  const model = embeddings?.model;
  const inStatement = deps.vectors.kind === 'pgvector' && embeddings !== undefined && text.trim() !== '';
  const query = inStatement ? await embedQuery(deps, text) : undefined;
  const found = await memoryCandidates(deps.db, scope, text, CANDIDATES, model === undefined ? undefined : { model, query }, newest);
  const rows = new Map(found.rows.map((r) => [r.id, r]));
  let embedding = found.embedding === 'index' ? undefined : found.embedding;
  // Another model's vectors (not re-embedded yet) are never compared; with none of this one's, nothing is embedded.
  if (embeddings && found.totals.embedded > 0 && (found.embedding === 'index' || !inStatement)) {
    const vector = query ?? (await embedQuery(deps, text));
    embedding = vector && (await searchVectors(deps, scope, embeddings.model, vector));
    const missing = (embedding ?? []).map((e) => e.id).filter((id) => !rows.has(id));
    for (const r of await getMemories(deps.db, scope.owner, missing)) rows.set(r.id, r);
  }
  return {
    keyword: found.keyword,
    trigram: found.trigram,
    ...(embedding ? { embedding } : {}),
    rows,
    totals: { saved: found.totals.saved, missions: found.totals.missions },
    newest: found.newest,
  };
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
  const ranked = await rankMemories(deps, scope, text);
  return selectMemories(fuseRankings(ranked, deps.tuning), ranked.rows, limit);
}

/** The query's vector, or undefined when the encoder fails (retrieval goes on by keyword and trigram). */
async function embedQuery(deps: RetrievalDeps, text: string): Promise<number[] | undefined> {
  if (!deps.embeddings || !text.trim()) return undefined;
  try {
    return (await deps.embeddings.embed([text]))[0];
  } catch (err) {
    // Embeddings only add to retrieval: without them keyword and trigram still answer.
    deps.logger?.warn('embeddings unavailable; retrieving by keyword and trigram only', { err: String(err) });
    return undefined;
  }
}

async function searchVectors(deps: RetrievalDeps, scope: MemoryScope, model: string, query: number[]): Promise<Rankings['embedding']> {
  try {
    return await deps.vectors.memories(deps.db, scope, model, query, CANDIDATES);
  } catch (err) {
    deps.logger?.warn('vector search failed; retrieving by keyword and trigram only', { err: String(err) });
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
