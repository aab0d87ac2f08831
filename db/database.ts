import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import type { Logger } from '../lib/logger.ts';
import { isDeadConnection } from './connection-errors.ts';
import { PG_TYPES } from './pg-types.ts';
import type { Database } from './schema.ts';
import { createPgliteDialect } from './pglite-dialect.ts';
import { createNotifications, type Notifications } from '../notify/notifications.ts';

/** The database handle, its LISTEN/NOTIFY channels, and a description safe to log (no credentials). */
export type DatabaseHandle = { db: Kysely<Database>; notifications: Notifications; kind: 'postgres' | 'pglite'; where: string };

/** Kysely over `pg` when a URL is given, else over embedded PGlite with its data under `dataDir/pglite`. */
export async function createDatabase(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  logger?: Logger;
}): Promise<DatabaseHandle> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      types: PG_TYPES,
    });
    // An idle client whose connection drops (server restart, failover) is already discarded by the pool and the next
    // query opens a new one; without a listener the pool's 'error' event would crash the process.
    pool.on('error', () => {});
    // A checked-out client whose connection drops before its query is sent emits 'error' with no pool listener
    // attached (the query rejects as well): unheard, that event would crash the process.
    pool.on('connect', (client) => client.on('error', () => {}));
    const url = new URL(opts.databaseUrl);
    const dialect = new PostgresDialect({ pool: retryDeadConnections(pool, opts.logger) });
    const db = new Kysely<Database>({ dialect });
    const notifications = createNotifications(db, { kind: 'postgres', url: opts.databaseUrl }, opts.logger);
    return { db, notifications, kind: 'postgres', where: `${url.host}${url.pathname}` };
  }
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  const dir = join(opts.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  // pg_trgm backs the trigram side of skill discovery and memory retrieval, on PGlite as on Postgres.
  const pglite = await PGlite.create(dir, { extensions: { pg_trgm } });
  const db = new Kysely<Database>({ dialect: createPgliteDialect(pglite) });
  const notifications = createNotifications(db, { kind: 'pglite', pglite }, opts.logger);
  return { db, notifications, kind: 'pglite', where: dir };
}

/**
 * The pool as Kysely sees it, with one repair: when the first query on a checked-out connection fails because that
 * pooled connection was already dead (a Postgres restart or failover cut it while idle), the query is sent once more
 * on a fresh connection. Only the first query of a checkout is retried: nothing of that session reached the server,
 * whereas a later query (inside a transaction) may follow statements that did.
 */
function retryDeadConnections(pool: pg.Pool, logger: Logger | undefined): PostgresPool {
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      let client: { query: pg.PoolClient['query']; release(destroy?: boolean | Error): void; processID?: number } = await pool.connect();
      let first = true;
      const wrapper = {
        get processID() {
          return client.processID;
        },
        query: ((text: unknown, values?: unknown) => {
          const retryable = first && typeof text === 'string';
          first = false;
          const run = () => client.query(text as string, values as unknown[]);
          if (!retryable) return client.query(text as never, values as never);
          return run().catch(async (err: unknown) => {
            if (!isDeadConnection(err)) throw err;
            logger?.warn('database connection was dead; retrying the query once on a fresh connection', { err });
            const dead = client;
            // Kysely releases the connection whatever happens next: if no fresh one can be had (the server is still
            // coming back), that release must not hand the dead client back a second time (pg-pool throws, a 500).
            client = { query: dead.query, release: () => {} };
            dead.release(true);
            client = await freshClient(pool);
            return run();
          });
        }) as unknown as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy),
      };
      return wrapper as PostgresPoolClient;
    },
  };
}

/** A new connection outside the pool's idle list (whose other members may be dead too), ended on release. */
async function freshClient(pool: pg.Pool) {
  const fresh = new pg.Client(pool.options);
  fresh.on('error', () => {});
  await fresh.connect();
  return {
    query: fresh.query.bind(fresh) as pg.PoolClient['query'],
    release: () => void fresh.end().catch(() => {}),
    processID: (fresh as unknown as { processID?: number }).processID,
  };
}

/** Whether the database answers a trivial query (the readiness check). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
