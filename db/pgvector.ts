import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/** Whether pgvector is installed in this database (migration 041 creates it where the server has it). */
export async function hasPgvector(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_extension where extname = 'vector'`.execute(db);
  return rows.length > 0;
}

/**
 * `column` and `query` as `vector(n)`, and the filter that picks the rows of that width: together they match the
 * partial HNSW index of width n (migration 041), when there is one; another width is compared exactly. `exact` spells
 * the distance so that no index matches it: the rows in scope are all compared (and sorted).
 */
export function asVectors(column: string, query: number[], exact = false): { distance: RawBuilder<number>; ofWidth: RawBuilder<boolean> } {
  const n = sql.raw(String(Math.trunc(query.length)));
  const col = sql.ref(column);
  const distance = sql<number>`(${col}::vector(${n}) <=> ${`[${query.join(',')}]`}::vector(${n}))`;
  return { distance: exact ? sql<number>`(${distance} + 0)` : distance, ofWidth: sql<boolean>`array_length(${col}, 1) = ${n}` };
}

/** Up to this many rows in scope, the nearest are found exactly (the owner's rows through their btree, sorted). */
export const EXACT_UP_TO = 20_000;

/**
 * The `k` rows nearest first by `select` (given `exact`, see `asVectors`). An owner with at most EXACT_UP_TO rows in
 * scope (`inScope` selects them) gets the exact answer: a few thousand distances cost milliseconds, and the index under
 * an owner's filter can miss their nearest rows: 300 near-duplicates of another user inserted first cut the rest of the
 * graph off, and the scan answered none of the owner's rows, or only rows far from the query. The count and the exact
 * search are one statement (one round trip); a larger owner then gets the HNSW index's answer, or the exact one when it
 * holds fewer than `k` rows.
 */
export async function nearestRows<R extends { distance: number }>(
  db: Kysely<Database>,
  k: number,
  select: (db: Kysely<Database>, exact: boolean) => SelectQueryBuilder<Database, never, R>,
  inScope: (db: Kysely<Database>) => SelectQueryBuilder<Database, never, unknown>,
): Promise<R[]> {
  const exact = select(db, true).where(sql<boolean>`(select n from in_scope) <= ${EXACT_UP_TO}`);
  const { rows: first } = await sql<R & { in_scope: string }>`
    with in_scope as (select count(*) as n from (${inScope(db).limit(EXACT_UP_TO + 1)}) as r)
    select (select n from in_scope) as in_scope, x.* from (select 1) as one left join (${exact}) as x on true`.execute(db);
  const few = Number(first[0]?.in_scope ?? 0) <= EXACT_UP_TO;
  let found = first.filter((r) => r.distance !== null).map(({ in_scope: _, ...r }) => r as unknown as R);
  if (!few) {
    found = await withIterativeScan(db, efSearchFor(k), (trx) => select(trx, false).execute());
    if (found.length < k) found = await select(db, true).execute();
  }
  // Relaxed order: the index may hand rows back slightly out of order; their distances are exact.
  return found.map((r) => ({ ...r, distance: Number(r.distance) })).sort((a, b) => a.distance - b.distance);
}

/** Candidates an HNSW scan considers per step for `k` results: never fewer than k, and 100 at least for recall. */
export const efSearchFor = (k: number) => Math.max(k, 100);

/**
 * Runs `fn` in a transaction whose HNSW scans keep going until `limit` rows pass the query's filters (pgvector 0.8's
 * iterative scan, relaxed order: callers sort the few rows by their exact distance) and consider `efSearch` candidates
 * per step. Without it a scan stops after `hnsw.ef_search` (40) candidates, and a filter on the owner leaves fewer rows
 * than asked, or none.
 */
export async function withIterativeScan<T>(
  db: Kysely<Database>,
  efSearch: number,
  fn: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local hnsw.iterative_scan = relaxed_order`.execute(trx);
    await sql`set local hnsw.ef_search = ${sql.raw(String(Math.trunc(efSearch)))}`.execute(trx);
    return fn(trx);
  });
}
