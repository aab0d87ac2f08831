import { sql, type Kysely } from 'kysely';

/** The widths that get an HNSW index: word vectors (100), the sentence encoder (384), common endpoint models. */
const INDEXED_WIDTHS = [100, 384, 768, 1024, 1536] as const;

// Nearest-neighbour search in the database (issue 36): pgvector's HNSW indexes over the stored vectors, one partial
// expression index per width, since one column holds every encoder's vectors (`double precision[]`, cast to
// `vector(n)`; the column is not duplicated). Where pgvector is not installed (PGlite, a server without it) or this role
// may not create it, nothing changes: vectors are scored in process (memory/vector-search.ts reads which at start).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    do $$ begin
      if exists (select 1 from pg_available_extensions where name = 'vector') then
        create extension if not exists vector;
      end if;
    exception when insufficient_privilege then
      raise notice 'pgvector is installed but this role may not create it: vectors are scored in process';
    end $$`.execute(db);
  const { rows } = await sql`select 1 from pg_extension where extname = 'vector'`.execute(db);
  if (rows.length === 0) return;
  for (const n of INDEXED_WIDTHS) {
    await sql`create index ${sql.raw(`memories_embedding_${n}`)} on memories using hnsw ((embedding::vector(${sql.raw(String(n))})) vector_cosine_ops)
      where array_length(embedding, 1) = ${sql.raw(String(n))}`.execute(db);
    await sql`create index ${sql.raw(`skill_chunks_embedding_${n}`)} on skill_chunks using hnsw ((embedding::vector(${sql.raw(String(n))})) vector_cosine_ops)
      where array_length(embedding, 1) = ${sql.raw(String(n))}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const n of INDEXED_WIDTHS) {
    await sql`drop index if exists ${sql.raw(`memories_embedding_${n}`)}`.execute(db);
    await sql`drop index if exists ${sql.raw(`skill_chunks_embedding_${n}`)}`.execute(db);
  }
  await sql`drop extension if exists vector`.execute(db);
}
