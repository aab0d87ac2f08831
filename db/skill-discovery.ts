import { sql, type Kysely } from 'kysely';
import type { Owner } from './owner.ts';
import type { ChunkKind } from './skill-versions.ts';
import type { Database } from './schema.ts';

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
  embedding: number[] | null;
};

/**
 * Every chunk of the owner's active skills (active version only) with its match signals for the message; with
 * `everyStatus`, of drafts and quarantined skills too (a near-duplicate is one whatever its review status).
 */
export async function matchSkillChunks(db: Kysely<Database>, owner: Owner, message: string, everyStatus = false): Promise<ChunkMatch[]> {
  const text = message.toLowerCase();
  const { rows } = await sql<ChunkMatch>`
    with m as (
      -- Any of the message's words, not all of them: a chunk matching some words of a long ask still ranks.
      select nullif(replace(plainto_tsquery('english', ${text})::text, '&', '|'), '')::tsquery as any_word
    )
    select s.id as "skillId", s.name, s.description, s.active_version as version, s.status, c.kind, c.text,
           coalesce(ts_rank_cd(c.search, m.any_word), 0)::float8 as rank,
           similarity(lower(c.text), ${text})::float8 as trigram,
           c.embedding
    from skills s
    join skill_chunks c on c.skill_id = s.id and c.version = s.active_version
    cross join m
    where s.tenant_id = ${owner.tenantId} and s.owner_id = ${owner.userId} and (${everyStatus} or s.status = 'active')`.execute(db);
  return rows.map((r) => ({ ...r, rank: Number(r.rank), trigram: Number(r.trigram) }));
}
