import { sql, type Kysely } from 'kysely';

// Trigram similarity for discovery and memory retrieval (Debian's postgresql and PGlite both ship pg_trgm).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop extension if exists pg_trgm`.execute(db);
}
