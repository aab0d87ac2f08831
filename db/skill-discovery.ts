import { sql, type Kysely } from 'kysely';
import type { Owner } from './owner.ts';
import type { ChunkKind } from './skill-versions.ts';
import type { Database, StoredVector } from './schema.ts';

/** How one chunk of an active skill matches a message, as Postgres measures it. */
export type ChunkMatch = {
  skillId: string;
  name: string;
  description: string;
  version: number;
  status: string;
  kind: ChunkKind;
  text: string;
  /** Full-text cover-density rank (ts_rank_cd) of the chunk for the message's words, any of them. */
  rank: number;
  /** Trigram similarity (pg_trgm) of chunk and message. */
  trigram: number;
  /** The chunk's vector when the encoder asked for made it; null otherwise (another encoder's is never compared). */
  embedding: number[] | null;
};

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
    select s.id as "skillId", s.name, s.description, s.active_version as version, s.status, c.kind, c.text,
           coalesce(ts_rank_cd(c.search, m.any_word), 0)::float8 as rank,
           similarity(lower(c.text), ${text})::float8 as trigram,
           case when c.embedding_model = ${model ?? null} then c.embedding end as embedding
    from skills s
    join skill_chunks c on c.skill_id = s.id and c.version = s.active_version
    cross join m
    where s.tenant_id = ${owner.tenantId} and s.owner_id = ${owner.userId} and (${everyStatus} or s.status = 'active')`.execute(db);
  return rows.map((r) => ({ ...r, rank: Number(r.rank), trigram: Number(r.trigram) }));
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
