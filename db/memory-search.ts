import { type Kysely, type QueryCreator, type SelectQueryBuilder } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import { asVectors, nearestRows } from './pgvector.ts';
import type { Database, MemoryRow } from './schema.ts';

/** Whose memories a search sees: the owner's; with a workspace, that workspace's and the user-wide ones. */
export type MemoryScope = { owner: Owner; workspaceCode?: string };

/** The scope's memories, to select from (also inside a statement whose CTEs add tables to `DB`). */
export function scoped<DB extends Database>(db: QueryCreator<DB>, scope: MemoryScope): SelectQueryBuilder<DB, 'memories', object> {
  let q = (db as unknown as QueryCreator<Database>).selectFrom('memories').where(whereOwner(scope.owner));
  const ws = scope.workspaceCode;
  if (ws !== undefined) q = q.where((eb) => eb.or([eb('workspace_code', '=', ws), eb('workspace_code', 'is', null)]));
  return q as unknown as SelectQueryBuilder<DB, 'memories', object>;
}

/** The query's words as an OR of lexemes (any shared word matches; ts_rank orders by how many and how often). */
export function orQuery(text: string): string {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1);
  return words.join(' | ');
}

/**
 * The ids of the memories in scope embedded by `model`, newest first, at most `limit` (their vectors: `memoryVectors`).
 * Another encoder's vectors are never compared with this one's, whatever their length.
 */
export async function embeddedMemoryIds(db: Kysely<Database>, scope: MemoryScope, model: string, limit: number): Promise<string[]> {
  const rows = await scoped(db, scope)
    .select('id')
    .where('embedding', 'is not', null)
    .where('embedding_model', '=', model)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The `k` memories in scope embedded by `model` nearest to `query` by cosine, best first, each with its cosine:
 * pgvector's HNSW index of the query's width, scanned until `k` of the owner's rows are found.
 */
export async function nearestMemories(
  db: Kysely<Database>,
  scope: MemoryScope,
  model: string,
  query: number[],
  k: number,
): Promise<Array<{ id: string; score: number }>> {
  const rows = await nearestRows(
    db,
    k,
    (trx, exact) => nearestMemoriesQuery(trx, scope, model, query, k, exact),
    (trx) => scoped(trx, scope).select('id').where('embedding_model', '=', model),
  );
  return rows.map((r) => ({ id: r.id, score: 1 - r.distance }));
}

/** The select of `nearestMemories` (run it inside `withIterativeScan`; a bench explains it). */
export function nearestMemoriesQuery(db: Kysely<Database>, scope: MemoryScope, model: string, query: number[], k: number, exact = false) {
  const { distance, ofWidth } = asVectors('embedding', query, exact);
  return scoped(db, scope)
    .select(['id', distance.as('distance')])
    .where('embedding_model', '=', model)
    .where(ofWidth)
    .orderBy(distance)
    .limit(k);
}

/** The vectors `model` made of the given memories (those that have one of that model). */
export async function memoryVectors(
  db: Kysely<Database>,
  ids: string[],
  model: string,
): Promise<Array<{ id: string; embedding: number[] }>> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('memories')
    .select(['id', 'embedding'])
    .where('id', 'in', ids)
    .where('embedding', 'is not', null)
    .where('embedding_model', '=', model)
    .execute();
  return rows.map((r) => ({ id: r.id, embedding: r.embedding! }));
}

/** The scope's newest saved facts (not missions' completion memories), at most `limit`, leaving out `except`. */
export async function newestSavedMemories(db: Kysely<Database>, scope: MemoryScope, limit: number, except: string[]): Promise<MemoryRow[]> {
  let q = scoped(db, scope).selectAll().where('source', '<>', 'mission');
  if (except.length > 0) q = q.where('id', 'not in', except);
  return q.orderBy('seq', 'desc').limit(limit).execute();
}
