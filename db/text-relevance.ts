import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** How one text matches a message, measured by Postgres as skill discovery measures its chunks. */
export type TextMatch = { rank: number; trigram: number };

/**
 * For each text, in order: full-text cover-density rank (ts_rank_cd, any of the message's stemmed words) and pg_trgm
 * similarity with the message. Texts are passed as one array parameter, so nothing is stored.
 */
export async function matchTexts(db: Kysely<Database>, message: string, texts: readonly string[]): Promise<TextMatch[]> {
  if (texts.length === 0) return [];
  const text = message.toLowerCase();
  const { rows } = await sql<{ ord: string; rank: number; trigram: number }>`
    with m as (
      select nullif(replace(plainto_tsquery('english', ${text})::text, '&', '|'), '')::tsquery as any_word
    )
    select t.ord, coalesce(ts_rank_cd(to_tsvector('english', t.body), m.any_word), 0)::float8 as rank,
           similarity(lower(t.body), ${text})::float8 as trigram
    from unnest(${sql.val(texts)}::text[]) with ordinality as t(body, ord)
    cross join m
    order by t.ord`.execute(db);
  return rows.map((r) => ({ rank: Number(r.rank), trigram: Number(r.trigram) }));
}
