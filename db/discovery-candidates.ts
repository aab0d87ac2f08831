import { sql, type Kysely } from 'kysely';
import { LEXICAL_EXACT_UP_TO } from './memory-candidates.ts';
import type { Owner } from './owner.ts';
import type { Database } from './schema.ts';
import type { ChunkMatch } from './skill-discovery.ts';

/** Where a chunk lies: its skill, version and place. */
export type ChunkPlace = { skillId: string; version: number; ordinal: number };

/**
 * The chunks of the owner's active skills (active version) that discovery scores for a message, with their match
 * signals, in one statement. An owner with at most LEXICAL_EXACT_UP_TO chunks gets every chunk, as always. A larger
 * owner gets the chunks that can score: those whose words count (identity, trigger, not_for) and that share a stemmed
 * word with the message (the GIN index on `search`) or reach pg_trgm's similarity threshold with it (0.3 by default,
 * the GIN index on `text`); the `nearest` chunks (their cosine counts, whatever their kind); and the identity chunk of
 * every skill whose name's first word the message holds (a named skill is always proposed). A chunk left out would
 * have added less than half the threshold to its skill's lexical score.
 */
export async function matchDiscoveryChunks(
  db: Kysely<Database>,
  owner: Owner,
  message: string,
  nearest: readonly ChunkPlace[],
): Promise<ChunkMatch[]> {
  const { rows } = await discoveryChunksQuery(owner, message, nearest).execute(db);
  return rows.map((r) => ({ ...r, rank: Number(r.rank), trigram: Number(r.trigram) }));
}

/** The statement of `matchDiscoveryChunks` (`bench/vector-search.ts` prints its plan at 20,000 chunks). */
export function discoveryChunksQuery(owner: Owner, message: string, nearest: readonly ChunkPlace[]) {
  const text = message.toLowerCase();
  const anyWord = sql`nullif(replace(plainto_tsquery('english', ${text})::text, '&', '|'), '')::tsquery`;
  return sql<ChunkMatch>`
    with active as (
      select id, name, description, active_version, status from skills
      where tenant_id = ${owner.tenantId} and owner_id = ${owner.userId} and status = 'active'
    ),
    in_scope as (
      select count(*) as n from (
        select 1 from active a join skill_chunks c on c.skill_id = a.id and c.version = a.active_version
        limit ${LEXICAL_EXACT_UP_TO + 1}
      ) as r
    ),
    places as (
      select c.skill_id, c.version, c.ordinal from active a join skill_chunks c on c.skill_id = a.id and c.version = a.active_version
      where (select n from in_scope) <= ${LEXICAL_EXACT_UP_TO}
      union
      -- The skills table itself, not the CTE: the planner can then start from the chunks' GIN indexes.
      select c.skill_id, c.version, c.ordinal from skill_chunks c join skills s on s.id = c.skill_id and s.active_version = c.version
      where (select n from in_scope) > ${LEXICAL_EXACT_UP_TO} and c.kind in ('identity', 'trigger', 'not_for')
        and (c.search @@ ${anyWord} or c.text % ${text})
        and s.tenant_id = ${owner.tenantId} and s.owner_id = ${owner.userId} and s.status = 'active'
      union
      select k.skill_id, k.version, k.ordinal
      from unnest(${nearest.map((n) => n.skillId)}::text[], ${nearest.map((n) => n.version)}::int[], ${nearest.map((n) => n.ordinal)}::int[])
        as k(skill_id, version, ordinal)
      where (select n from in_scope) > ${LEXICAL_EXACT_UP_TO}
      union
      select c.skill_id, c.version, c.ordinal from active a join skill_chunks c on c.skill_id = a.id and c.version = a.active_version
      where (select n from in_scope) > ${LEXICAL_EXACT_UP_TO} and c.kind = 'identity'
        and strpos(${text}, split_part(lower(a.name), '-', 1)) > 0
    )
    select a.id as "skillId", a.name, a.description, a.active_version as version, a.status, c.ordinal, c.kind, c.text,
           coalesce(ts_rank_cd(c.search, ${anyWord}), 0)::float8 as rank,
           similarity(lower(c.text), ${text})::float8 as trigram,
           null as embedding
    from places p
    join skill_chunks c on c.skill_id = p.skill_id and c.version = p.version and c.ordinal = p.ordinal
    join active a on a.id = c.skill_id and a.active_version = c.version`;
}
