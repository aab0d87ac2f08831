import type { Kysely } from 'kysely';
import { getMemories } from '../db/memories.ts';
import { embeddedMemories, keywordRanking, trigramRanking, type MemoryScope } from '../db/memory-search.ts';
import type { Database, MemoryRow } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import { cosine, type EmbeddingsClient } from './embeddings-client.ts';
import { reciprocalRankFusion } from './rank-fusion.ts';
import { selectDiverse } from './select-diverse.ts';

/** What retrieval needs: the database and, when configured, an embeddings endpoint. */
export type RetrievalDeps = { db: Kysely<Database>; embeddings?: EmbeddingsClient | undefined; logger?: Logger };

/** How many candidates each ranking contributes to the fusion. */
const CANDIDATES = 30;
/** Embedded memories compared with the query, newest first (cosine in process: no vector extension needed). */
const MAX_EMBEDDED = 5_000;

/** Each retriever's ranking of the scope's memories for `text`, best first; `embedding` only when configured. */
export async function rankMemories(deps: RetrievalDeps, scope: MemoryScope, text: string) {
  const [keyword, trigram, embedding] = await Promise.all([
    keywordRanking(deps.db, scope, text, CANDIDATES),
    trigramRanking(deps.db, scope, text, CANDIDATES),
    embeddingRanking(deps, scope, text),
  ]);
  return { keyword, trigram, ...(embedding ? { embedding } : {}) };
}

/**
 * Hybrid retrieval: full-text and trigram rankings (plus embeddings when configured) fused by reciprocal rank,
 * then maximal marginal relevance keeps at most `limit` relevant, non-redundant memories, best first.
 */
export async function retrieveMemories(deps: RetrievalDeps, scope: MemoryScope, text: string, limit = 5): Promise<MemoryRow[]> {
  const ranked = await rankMemories(deps, scope, text);
  const fused = reciprocalRankFusion(Object.values(ranked)).slice(0, CANDIDATES);
  const rows = new Map(
    (
      await getMemories(
        deps.db,
        scope.owner,
        fused.map((f) => f.id),
      )
    ).map((r) => [r.id, r]),
  );
  const candidates = fused.flatMap((f) => {
    const row = rows.get(f.id);
    return row ? [{ ...f, text: row.content }] : [];
  });
  return selectDiverse(candidates, { limit }).map((c) => rows.get(c.id)!);
}

async function embeddingRanking(deps: RetrievalDeps, scope: MemoryScope, text: string): Promise<string[] | undefined> {
  if (!deps.embeddings || !text.trim()) return undefined;
  try {
    const [query] = await deps.embeddings.embed([text]);
    const rows = await embeddedMemories(deps.db, scope, MAX_EMBEDDED);
    return rows
      .map((r) => ({ id: r.id, score: cosine(query ?? [], r.embedding ?? []) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, CANDIDATES)
      .map((r) => r.id);
  } catch (err) {
    // Embeddings only add to retrieval: without them keyword and trigram still answer.
    deps.logger?.warn('embeddings unavailable; retrieving by keyword and trigram only', { err: String(err) });
    return undefined;
  }
}

/** The vector of a text to store with a memory, or null when no endpoint is configured or it fails. */
export async function embedForStorage(deps: RetrievalDeps, text: string): Promise<number[] | null> {
  if (!deps.embeddings) return null;
  try {
    return (await deps.embeddings.embed([text]))[0] ?? null;
  } catch (err) {
    deps.logger?.warn('embeddings unavailable; memory stored without a vector', { err: String(err) });
    return null;
  }
}
