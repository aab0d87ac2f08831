import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

/** A Kysely dialect over embedded PGlite (one in-process connection, handed out one holder at a time). */
export function createPgliteDialect(pglite: PGlite): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => createDriver(pglite),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

function createDriver(pglite: PGlite): Driver {
  // PGlite has a single session: a transaction must own it until it ends, so connections are a mutex.
  let queue: Promise<void> = Promise.resolve();
  const releases = new WeakMap<DatabaseConnection, () => void>();
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      const res = await pglite.query<R>(q.sql, q.parameters as unknown[]);
      const affected = res.affectedRows ?? 0;
      const isWrite = /^\s*(insert|update|delete|merge)/i.test(q.sql);
      return { rows: res.rows, ...(isWrite ? { numAffectedRows: BigInt(affected) } : {}) };
    },
    streamQuery() {
      throw new Error('streaming is not supported on PGlite');
    },
  };
  return {
    async init() {},
    async acquireConnection() {
      const previous = queue;
      let release!: () => void;
      queue = new Promise((ok) => (release = ok));
      await previous;
      const handle = Object.create(connection) as DatabaseConnection;
      releases.set(handle, release);
      return handle;
    },
    async beginTransaction(conn) {
      await conn.executeQuery(CompiledQuery.raw('begin'));
    },
    async commitTransaction(conn) {
      await conn.executeQuery(CompiledQuery.raw('commit'));
    },
    async rollbackTransaction(conn) {
      await conn.executeQuery(CompiledQuery.raw('rollback'));
    },
    async releaseConnection(conn) {
      releases.get(conn)?.();
    },
    async destroy() {
      await pglite.close();
    },
  };
}
