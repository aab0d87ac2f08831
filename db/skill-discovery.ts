import { sql, type Kysely } from 'kysely';
import type { Owner } from './owner.ts';
import type { ChunkKind } from './skill-versions.ts';
import { asVectors, nearestRows } from './pgvector.ts';
import type { Database, StoredVector } from './schema.ts';

/** How one chunk of an active skill matches a message, as Postgres measures it. */
export type ChunkMatch = {
  skillId: string;
  name: string;
  description: string;
  version: number;
  status: string;
  /** The chunk's place in its version (with `skillId` and `version`, its key: `chunkKey`). */
  ordinal: number;
  kind: ChunkKind;
  text: string;
  /** Full-text cover-density rank (ts_rank_cd) of the chunk for the message's words, any of them. */
  rank: number;
  /** Trigram similarity (pg_trgm) of chunk and message. */
  trigram: number;
  /** The chunk's vector when the encoder asked for made it; null otherwise (another encoder's is never compared). */
  embedding: number[] | null;
  /** The chunk's cosine with the message, when discovery compared their vectors (`VectorSearch.chunks`). */
  cosine?: number;
};

/** A chunk's key, as `VectorSearch.chunks` names it. */
export const chunkKey = (c: { skillId: string; version: number; ordinal: number }) => `${c.skillId}:${c.version}:${c.ordinal}`;

/**
 * Every chunk of the owner's active skills (active version only) with its match signals for the message and its vector
 * when `model` made it; with `everyStatus`, of drafts and quarantined skills too (a near-duplicate is one whatever its
 * review status).
 */
export async function matchSkillChunks(
  db: Kysely<Database>,
  owner: Owner,
  message: string,
  model: string | undefined,
  everyStatus = false,
): Promise<ChunkMatch[]> {
  const text = message.toLowerCase();
  const { rows } = await sql<ChunkMatch>`
    with m as (
      -- Any of the message's words, not all of them: a chunk matching some words of a long ask still ranks.
      select nullif(replace(plainto_tsquery('english', ${text})::text, '&', '|'), '')::tsquery as any_word
    )
    select s.id as "skillId", s.name, s.description, s.active_version as version, s.status, c.ordinal, c.kind, c.text,
           coalesce(ts_rank_cd(c.search, m.any_word), 0)::float8 as rank,
           similarity(lower(c.text), ${text})::float8 as trigram,
           case when c.embedding_model = ${model ?? null} then c.embedding end as embedding
    from skills s
    join skill_chunks c on c.skill_id = s.id and c.version = s.active_version
    cross join m
    where s.tenant_id = ${owner.tenantId} and s.owner_id = ${owner.userId} and (${everyStatus} or s.status = 'active')`.execute(db);
  return rows.map((r) => ({ ...r, rank: Number(r.rank), trigram: Number(r.trigram) }));
}

/** The chunks of the owner's active skills (active version) that `model` embedded, with their vectors. */
export async function activeChunkVectors(
  db: Kysely<Database>,
  owner: Owner,
  model: string,
): Promise<Array<{ skillId: string; version: number; ordinal: number; embedding: number[] }>> {
  return activeChunks(db, owner, model).select(['c.embedding as embedding']).$narrowType<{ embedding: number[] }>().execute();
}

/**
 * The `k` chunks of the owner's active skills (active version) embedded by `model` nearest to `query`, best first, with
 * their cosines: pgvector's HNSW index of the query's width, scanned until `k` of the owner's chunks are found.
 */
export async function nearestChunks(
  db: Kysely<Database>,
  owner: Owner,
  model: string,
  query: number[],
  k: number,
): Promise<Array<{ skillId: string; version: number; ordinal: number; score: number }>> {
  const rows = await nearestRows(
    db,
    k,
    (trx, exact) => nearestChunksQuery(trx, owner, model, query, k, exact),
    (trx) => activeChunks(trx, owner, model),
  );
  return rows.map(({ distance, ...key }) => ({ ...key, score: 1 - distance }));
}

/** The select of `nearestChunks` (run it inside `withIterativeScan`; a bench explains it). */
export function nearestChunksQuery(db: Kysely<Database>, owner: Owner, model: string, query: number[], k: number, exact = false) {
  const { distance, ofWidth } = asVectors('c.embedding', query, exact);
  return db
    .selectFrom('skill_chunks as c')
    .select(['c.skill_id as skillId', 'c.version', 'c.ordinal', distance.as('distance')])
    .where('c.embedding_model', '=', model)
    .where(ofWidth)
    .where(({ exists, selectFrom }) =>
      exists(
        // A filter on each chunk the index hands over (`offset 0` keeps the planner from turning it into a join): a join
        // with skills would take the index's rows unordered, up to hnsw.max_scan_tuples of them, and sort them (1 s
        // at 20,000 chunks, bench/vector-search.ts) instead of stopping at the k nearest.
        selectFrom('skills as s')
          .select(sql`1`.as('one'))
          .whereRef('s.id', '=', 'c.skill_id')
          .whereRef('s.active_version', '=', 'c.version')
          .where('s.tenant_id', '=', owner.tenantId)
          .where('s.owner_id', '=', owner.userId)
          .where('s.status', '=', 'active')
          .offset(0),
      ),
    )
    .orderBy(distance)
    .limit(k);
}

function activeChunks(db: Kysely<Database>, owner: Owner, model: string) {
  return db
    .selectFrom('skill_chunks as c')
    .innerJoin('skills as s', (j) => j.onRef('s.id', '=', 'c.skill_id').onRef('s.active_version', '=', 'c.version'))
    .select(['c.skill_id as skillId', 'c.version', 'c.ordinal'])
    .where('s.tenant_id', '=', owner.tenantId)
    .where('s.owner_id', '=', owner.userId)
    .where('s.status', '=', 'active')
    .where('c.embedding_model', '=', model)
    .where('c.embedding', 'is not', null);
}

/** Chunks whose vector is missing or was made by another encoder than `model`: what a re-embedding pass works through. */
export async function chunksToEmbed(db: Kysely<Database>, model: string, limit: number): Promise<ChunkKey[]> {
  return db
    .selectFrom('skill_chunks')
    .select(['skill_id', 'version', 'ordinal', 'text'])
    .where((eb) => eb.or([eb('embedding', 'is', null), eb('embedding_model', 'is distinct from', model)]))
    .orderBy('skill_id')
    .orderBy('version')
    .orderBy('ordinal')
    .limit(limit)
    .execute();
}

/** A stored chunk's key and text. */
export type ChunkKey = { skill_id: string; version: number; ordinal: number; text: string };

/** Replaces one chunk's vector and the encoder recorded with it. */
export async function setChunkEmbedding(db: Kysely<Database>, chunk: ChunkKey, embedding: StoredVector): Promise<void> {
  await db
    .updateTable('skill_chunks')
    .set({ embedding: embedding.vector, embedding_model: embedding.model })
    .where('skill_id', '=', chunk.skill_id)
    .where('version', '=', chunk.version)
    .where('ordinal', '=', chunk.ordinal)
    .execute();
}
