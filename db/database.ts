import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { createPgliteDialect } from './pglite-dialect.ts';

/** The database handle plus a description safe to log (no credentials). */
export type DatabaseHandle = { db: Kysely<Database>; kind: 'postgres' | 'pglite'; where: string };

/** Kysely over `pg` when a URL is given, else over embedded PGlite with its data under `dataDir/pglite`. */
export async function createDatabase(opts: { databaseUrl?: string; dataDir: string; poolSize?: number }): Promise<DatabaseHandle> {
  if (opts.databaseUrl) {
    // A connection that cannot be had in 10 s (server unreachable, not refusing) fails instead of hanging: activities
    // then wait the outage out (activities/database-outage.ts) rather than block past their timeouts.
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10, connectionTimeoutMillis: 10_000 });
    // An idle client whose connection drops (server restart, failover) is already discarded by the pool and the next
    // query opens a new one; without a listener the pool's 'error' event would crash the process.
    pool.on('error', () => {});
    // A checked-out client whose connection drops before its query is sent emits 'error' with no pool listener
    // attached (the query rejects as well): unheard, that event would crash the process.
    pool.on('connect', (client) => client.on('error', () => {}));
    const url = new URL(opts.databaseUrl);
    return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), kind: 'postgres', where: `${url.host}${url.pathname}` };
  }
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  const dir = join(opts.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  // pg_trgm backs the trigram side of skill discovery and memory retrieval, on PGlite as on Postgres.
  const pglite = await PGlite.create(dir, { extensions: { pg_trgm } });
  return { db: new Kysely<Database>({ dialect: createPgliteDialect(pglite) }), kind: 'pglite', where: dir };
}
