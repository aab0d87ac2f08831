import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { insertMemory } from '../db/memories.ts';
import type { Database } from '../db/schema.ts';
import { reciprocalRankFusion } from '../memory/rank-fusion.ts';
import { rankMemories, retrieveMemories } from '../memory/retrieve.ts';

/** The labelled retrieval set: memories with fixture ids, and queries with the ids relevant to them. */
export type RetrievalSet = { memories: Array<{ id: string; content: string }>; queries: Array<{ query: string; relevant: string[] }> };

export const RETRIEVAL_SET_PATH = new URL('../test/fixtures/memory/retrieval-set.json', import.meta.url);
export const loadRetrievalSet = (): RetrievalSet => JSON.parse(readFileSync(RETRIEVAL_SET_PATH, 'utf8')) as RetrievalSet;

/** Mean recall@5 and mean reciprocal rank of one retriever over the set. */
export type Figures = { recallAt5: number; mrr: number };
export type RetrieverName = 'keyword' | 'trigram' | 'fused' | 'fused + selection';

const OWNER = { tenantId: 'bench', userId: 'hannah' };

/** Stores the set's memories for one user (fixture id kept as the source key) and scores each retriever on it. */
export async function evaluateRetrieval(
  db: Kysely<Database>,
  set: RetrievalSet = loadRetrievalSet(),
): Promise<Record<RetrieverName, Figures>> {
  const fixtureId = new Map<string, string>();
  for (const m of set.memories) {
    const { row } = await insertMemory(db, {
      owner: OWNER,
      workspaceCode: null,
      content: m.content,
      source: 'user',
      sourceKey: `fixture/${m.id}`,
    });
    fixtureId.set(row.id, m.id);
  }
  const names: RetrieverName[] = ['keyword', 'trigram', 'fused', 'fused + selection'];
  const sums = Object.fromEntries(names.map((n) => [n, { recallAt5: 0, mrr: 0 }])) as Record<RetrieverName, Figures>;
  for (const { query, relevant } of set.queries) {
    const scope = { owner: OWNER };
    const ranked = await rankMemories({ db }, scope, query);
    const lists: Record<RetrieverName, string[]> = {
      keyword: ranked.keyword,
      trigram: ranked.trigram,
      fused: reciprocalRankFusion([ranked.keyword, ranked.trigram]).map((f) => f.id),
      'fused + selection': (await retrieveMemories({ db }, scope, query, 5)).map((r) => r.id),
    };
    for (const name of names) {
      const ids = lists[name].map((id) => fixtureId.get(id));
      sums[name].recallAt5 += relevant.filter((r) => ids.slice(0, 5).includes(r)).length / relevant.length;
      const first = ids.findIndex((id) => id !== undefined && relevant.includes(id));
      sums[name].mrr += first < 0 ? 0 : 1 / (first + 1);
    }
  }
  const n = set.queries.length;
  return Object.fromEntries(names.map((k) => [k, { recallAt5: sums[k].recallAt5 / n, mrr: sums[k].mrr / n }])) as Record<
    RetrieverName,
    Figures
  >;
}
