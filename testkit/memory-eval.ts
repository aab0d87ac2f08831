import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { getMemories, insertMemory } from '../db/memories.ts';
import type { Database, MemoryRow } from '../db/schema.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import { fuseRankings, MEMORY_TUNING, rankMemories, selectMemories, type MemoryTuning, type Rankings } from '../memory/retrieve.ts';

/** Which part of a labelled set a query belongs to: tuning may be looked at while choosing settings, held-out never. */
export type Split = 'tune' | 'held_out';
export const SPLITS: Split[] = ['tune', 'held_out'];

/** A labelled query: the memory fixture ids relevant to it. */
export type LabelledQuery = { query: string; relevant: string[]; split: Split };
/** The labelled retrieval set: memories with fixture ids, and keyword queries (they share words with their answers). */
export type RetrievalSet = { memories: Array<{ id: string; content: string }>; queries: LabelledQuery[] };

const FIXTURES = new URL('../test/fixtures/memory/', import.meta.url);
export const loadRetrievalSet = (): RetrievalSet =>
  JSON.parse(readFileSync(new URL('retrieval-set.json', FIXTURES), 'utf8')) as RetrievalSet;
/** Paraphrases over the same memories: no query shares a content word with its relevant memory. */
export const loadParaphraseSet = (): { queries: LabelledQuery[] } =>
  JSON.parse(readFileSync(new URL('paraphrase-set.json', FIXTURES), 'utf8')) as { queries: LabelledQuery[] };
/**
 * Paraphrases written on 2026-12-03, before any further tuning, by someone who read neither the ranking nor the other
 * sets: every query held out, never scored by `--sweep`.
 */
export const loadParaphraseHeldOut = (): { queries: LabelledQuery[] } =>
  JSON.parse(readFileSync(new URL('paraphrase-held-out.json', FIXTURES), 'utf8')) as { queries: LabelledQuery[] };

/** Mean recall@5 and mean reciprocal rank of one retriever over some queries. */
export type Figures = { recallAt5: number; mrr: number; queries: number };
/** keyword, trigram, embeddings: one ranking alone; lexical: keyword + trigram fused and selected; fused: all three. */
export type RetrieverName = 'keyword' | 'trigram' | 'embeddings' | 'lexical' | 'fused';
export const RETRIEVERS: RetrieverName[] = ['keyword', 'trigram', 'embeddings', 'lexical', 'fused'];

const OWNER = { tenantId: 'bench', userId: 'hannah' };
const scope = { owner: OWNER };

/** The set's memories stored for one user (fixture id kept as the source key, vectors from `embeddings`). */
export async function storeRetrievalSet(db: Kysely<Database>, set: RetrievalSet, embeddings?: EmbeddingsClient) {
  const vectors = embeddings ? await embeddings.embed(set.memories.map((m) => m.content)) : [];
  const fixtureId = new Map<string, string>();
  for (const [i, m] of set.memories.entries()) {
    const { row } = await insertMemory(db, {
      owner: OWNER,
      workspaceCode: null,
      content: m.content,
      source: 'user',
      sourceKey: `fixture/${m.id}`,
      embedding: embeddings && vectors[i] ? { model: embeddings.model, vector: vectors[i] } : null,
    });
    fixtureId.set(row.id, m.id);
  }
  return fixtureId;
}

/** Each query's rankings, fetched once so settings can be swept over them without asking the database again. */
export type RankedQueries = { ranked: Array<LabelledQuery & { rankings: Rankings }>; rows: Map<string, MemoryRow> };

export async function rankQueries(
  deps: { db: Kysely<Database>; embeddings?: EmbeddingsClient; vectors: VectorSearch },
  fixtureId: Map<string, string>,
  queries: LabelledQuery[],
): Promise<RankedQueries> {
  const ranked = [];
  for (const q of queries) ranked.push({ ...q, rankings: await rankMemories(deps, scope, q.query) });
  const rows = new Map((await getMemories(deps.db, OWNER, [...fixtureId.keys()])).map((r) => [r.id, r]));
  return { ranked, rows };
}

/** Each retriever's figures per split; `lexical` and `fused` go through the same fusion and selection as retrieval. */
export function scoreRetrievers(
  { ranked, rows }: RankedQueries,
  fixtureId: Map<string, string>,
  tuning: MemoryTuning = MEMORY_TUNING,
): Record<Split, Record<RetrieverName, Figures>> {
  const sums = Object.fromEntries(
    SPLITS.map((s) => [s, Object.fromEntries(RETRIEVERS.map((n) => [n, { recallAt5: 0, mrr: 0, queries: 0 }]))]),
  ) as Record<Split, Record<RetrieverName, Figures>>;
  for (const { relevant, split, rankings } of ranked) {
    const lexical = { keyword: rankings.keyword, trigram: rankings.trigram };
    const lists: Record<RetrieverName, string[]> = {
      keyword: rankings.keyword,
      trigram: rankings.trigram,
      embeddings: (rankings.embedding ?? []).map((e) => e.id),
      lexical: selectMemories(fuseRankings(lexical, tuning), rows, 5).map((r) => r.id),
      fused: selectMemories(fuseRankings(rankings, tuning), rows, 5).map((r) => r.id),
    };
    for (const name of RETRIEVERS) {
      const ids = lists[name].map((id) => fixtureId.get(id));
      const f = sums[split][name];
      f.recallAt5 += relevant.filter((r) => ids.slice(0, 5).includes(r)).length / relevant.length;
      const first = ids.findIndex((id) => id !== undefined && relevant.includes(id));
      f.mrr += first < 0 ? 0 : 1 / (first + 1);
      f.queries++;
    }
  }
  for (const split of SPLITS)
    for (const f of Object.values(sums[split])) {
      f.recallAt5 /= Math.max(f.queries, 1);
      f.mrr /= Math.max(f.queries, 1);
    }
  return sums;
}
