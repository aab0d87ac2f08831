import { sql, type Kysely } from 'kysely';
import { orQuery, scoped, type MemoryScope } from './memory-search.ts';
import { asVectors, EXACT_UP_TO } from './pgvector.ts';
import type { Database, MemoryRow } from './schema.ts';

/** The lowest pg_trgm word similarity of the query within a memory that puts it in the trigram ranking. */
const MIN_WORD_SIMILARITY = 0.1;

/**
 * Up to this many memories in scope, the trigram ranking compares the query with every one of them when the index
 * finds fewer than `k` (it finds only those reaching pg_trgm.word_similarity_threshold, 0.6 by default).
 */
export const LEXICAL_EXACT_UP_TO = 2_000;

/** Every ranking of one retrieval and the rows they name, from one statement. */
export type MemoryCandidates = {
  /** Ids by full-text rank (English stemming, any of the query's words), best first. */
  keyword: string[];
  /** Ids by pg_trgm word similarity of the query within each memory, best first. */
  trigram: string[];
  /**
   * The `k` memories embedded by `vector.model` nearest to `vector.query`, best first, each with its cosine, compared
   * exactly; `'index'` when more than EXACT_UP_TO are in scope (search pgvector's index: `nearestMemories`); absent
   * without a query vector or with no vector of its model in scope.
   */
  embedding?: Array<{ id: string; score: number }> | 'index';
  /** The rows the rankings name, and those of `newest`. */
  rows: MemoryRow[];
  /**
   * The scope's newest saved facts (not missions' completion memories) that no ranking named, newest first, at most the
   * `newest` asked for: with the ranked rows, what a context's free slots are filled from without another read.
   */
  newest: string[];
  /** The memories in scope: the user's saved facts, missions' completion memories, and those `vector.model` embedded. */
  totals: { saved: number; missions: number; embedded: number };
};

/**
 * The keyword, trigram and (with `vector.query`, under pgvector) nearest-vector candidates of a query, each at most `k`, with
 * their rows, the scope's totals and its `newest` newest saved facts the rankings did not name, in one round trip. Keyword matches come through the GIN index on `search`;
 * trigram matches through the pg_trgm GIN index on `content` (`<%`), and the answer is exact whenever it holds `k`
 * rows (each one at least as similar as any the index left out) or the scope is small; a larger scope whose best
 * matches are weaker than the threshold keeps what the index found.
 */
export async function memoryCandidates(
  db: Kysely<Database>,
  scope: MemoryScope,
  text: string,
  k: number,
  vector?: { model: string; query?: number[] | undefined },
  newest = 0,
): Promise<MemoryCandidates> {
  const rows = await memoryCandidatesQuery(db, scope, text, k, vector, newest).execute();
  const first = rows[0];
  const totals = { saved: Number(first?.saved ?? 0), missions: Number(first?.missions ?? 0), embedded: Number(first?.embedded ?? 0) };
  const found = rows.filter((r) => r.id !== null);
  const ranked = (pos: (r: (typeof found)[number]) => string | number | null) =>
    found
      .filter((r) => pos(r) !== null)
      .sort((a, b) => Number(pos(a)) - Number(pos(b)))
      .map((r) => r.id!);
  const embedding =
    !vector?.query || totals.embedded === 0
      ? undefined
      : totals.embedded > EXACT_UP_TO
        ? ('index' as const)
        : found
            .filter((r) => r.distance !== null)
            .map((r) => ({ id: r.id!, score: 1 - Number(r.distance) }))
            .sort((a, b) => b.score - a.score);
  return {
    keyword: ranked((r) => r.keyword_pos),
    trigram: ranked((r) => r.trigram_pos),
    ...(embedding ? { embedding } : {}),
    rows: found.map(
      ({ saved: _s, missions: _m, embedded: _e, keyword_pos: _k, trigram_pos: _t, distance: _d, newest_pos: _n, ...row }) =>
        row as MemoryRow,
    ),
    newest: ranked((r) => r.newest_pos),
    totals,
  };
}

/** The statement of `memoryCandidates` (`bench/vector-search.ts` prints its plan at 100,000 memories). */
export function memoryCandidatesQuery(
  db: Kysely<Database>,
  scope: MemoryScope,
  text: string,
  k: number,
  vector?: { model: string; query?: number[] | undefined },
  newest = 0,
) {
  const terms = orQuery(text);
  const tsquery = sql`to_tsquery('english', ${terms})`;
  const similarity = sql<number>`word_similarity(${text}, content)`;
  const lexicalOn = sql<boolean>`${text.trim() !== ''}`;
  const query = vector?.query;
  const { distance, ofWidth } = asVectors('embedding', query ?? [], true);
  return db
    .with('totals', (qc) =>
      scoped(qc, scope).select([
        sql<string>`count(*) filter (where source <> 'mission')`.as('saved'),
        sql<string>`count(*) filter (where source = 'mission')`.as('missions'),
        sql<string>`count(*) filter (where embedding_model = ${vector?.model ?? null} and embedding is not null)`.as('embedded'),
      ]),
    )
    .with('keyword', (qc) =>
      scoped(qc, scope)
        .select(['id', sql<string>`row_number() over (order by ts_rank(search, ${tsquery}, 1) desc, seq desc)`.as('pos')])
        .where(terms ? sql<boolean>`search @@ ${tsquery}` : sql<boolean>`false`)
        .orderBy('pos')
        .limit(k),
    )
    .with('trigram_index', (qc) =>
      scoped(qc, scope)
        .select(['id', 'seq', similarity.as('score')])
        .where(lexicalOn)
        .where(sql<boolean>`${text} <% content`)
        .where(similarity, '>=', MIN_WORD_SIMILARITY)
        .orderBy('score', 'desc')
        .orderBy('seq', 'desc')
        .limit(k),
    )
    .with('trigram_all', (qc) =>
      scoped(qc, scope)
        .select(['id', 'seq', similarity.as('score')])
        .where(lexicalOn)
        // Only when the index's answer may not be the best k: fewer than k found, in a scope small enough to compare all.
        .where(sql<boolean>`(select count(*) from trigram_index) < ${k}`)
        .where(sql<boolean>`(select saved + missions from totals) <= ${LEXICAL_EXACT_UP_TO}`)
        .where(similarity, '>=', MIN_WORD_SIMILARITY)
        .orderBy('score', 'desc')
        .orderBy('seq', 'desc')
        .limit(k),
    )
    .with('trigram', (qc) =>
      qc
        .selectFrom('trigram_all')
        .select(['id', sql<string>`row_number() over (order by score desc, seq desc)`.as('pos')])
        .unionAll(
          qc
            .selectFrom('trigram_index')
            .select(['id', sql<string>`row_number() over (order by score desc, seq desc)`.as('pos')])
            .where(sql<boolean>`not exists (select 1 from trigram_all)`),
        ),
    )
    .with('embedding', (qc) =>
      // Without a vector the CTE names no vector type: PGlite, and a Postgres without pgvector, have none.
      vector && query
        ? scoped(qc, scope)
            .select(['id', distance.as('distance')])
            .where('embedding_model', '=', vector.model)
            .where(ofWidth)
            .where(sql<boolean>`(select embedded from totals) <= ${EXACT_UP_TO}`)
            .orderBy(distance)
            .limit(k)
        : scoped(qc, scope)
            .select(['id', sql<number>`null::float8`.as('distance')])
            .where(sql<boolean>`false`),
    )
    .with('named', (qc) =>
      qc.selectFrom('keyword').select('id').union(qc.selectFrom('trigram').select('id')).union(qc.selectFrom('embedding').select('id')),
    )
    .with('newest', (qc) =>
      scoped(qc, scope)
        .select(['id', sql<string>`row_number() over (order by seq desc)`.as('pos')])
        .where('source', '<>', 'mission')
        .where(sql<boolean>`id not in (select id from named)`)
        .orderBy('seq', 'desc')
        .limit(newest),
    )
    .with('listed', (qc) => qc.selectFrom('named').select('id').union(qc.selectFrom('newest').select('id')))
    .selectFrom('totals')
    .leftJoin('listed', (j) => j.onTrue())
    .leftJoin('memories as m', 'm.id', 'listed.id')
    .leftJoin('keyword', 'keyword.id', 'listed.id')
    .leftJoin('trigram', 'trigram.id', 'listed.id')
    .leftJoin('embedding', 'embedding.id', 'listed.id')
    .leftJoin('newest', 'newest.id', 'listed.id')
    .selectAll('m')
    .select([
      'totals.saved',
      'totals.missions',
      'totals.embedded',
      'keyword.pos as keyword_pos',
      'trigram.pos as trigram_pos',
      'embedding.distance as distance',
      'newest.pos as newest_pos',
    ]);
}
