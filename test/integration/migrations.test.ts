import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { createApiKey } from '../../db/api-keys.ts';
import { createDatabase } from '../../db/database.ts';
import { createMigrator, migrateToLatest } from '../../db/migrator.ts';
import type { Database } from '../../db/schema.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';

const APP_TABLES = [
  'api_keys',
  'canvases',
  'context_compactions',
  'embeds',
  'eval_results',
  'eval_runs',
  'feed',
  'file_blobs',
  'integrations',
  'mcp_listings',
  'memories',
  'mission_events',
  'mission_files',
  'mission_messages',
  'missions',
  'model_calls',
  'profiles',
  'provider_buckets',
  'provider_calls',
  'provider_secrets',
  'provider_sends',
  'schedule_runs',
  'schedules',
  'skill_bundles',
  'skill_chunks',
  'skill_versions',
  'skills',
  'tenant_apps',
  'tool_approvals',
  'tool_calls',
  'webhook_deliveries',
  'webhooks',
];

/** The application's tables in the public schema (Kysely's own migration bookkeeping left out). */
async function appTables(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ tablename: string }>`select tablename from pg_tables where schemaname = 'public' order by tablename`.execute(
    db,
  );
  return rows.map((r) => r.tablename).filter((t) => !t.startsWith('kysely_'));
}

/** Migrates down one step at a time until nothing is left to undo. */
async function migrateAllTheWayDown(db: Kysely<Database>): Promise<void> {
  for (;;) {
    const { error, results } = await createMigrator(db).migrateDown();
    if (error) throw error;
    if (!results?.length) return;
  }
}

const owner = { tenantId: 'acme', userId: 'tx' };

/** The same checks on every database kind the service runs on. */
function migrationSuite(kind: string, open: () => Promise<{ db: Kysely<Database>; close(): Promise<void> }>) {
  describe(`migrations on ${kind}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    before(async () => {
      ({ db, close } = await open());
    });
    after(() => close());

    it('starts from an empty schema', async () => {
      assert.deepEqual(await appTables(db), []);
    });

    it('migrates to latest, creating every table', async () => {
      const applied = await migrateToLatest(db);
      assert.ok(applied.length > 0, 'some migration ran');
      assert.deepEqual(await appTables(db), APP_TABLES);
      const columns = await sql<{ column_name: string }>`
        select column_name from information_schema.columns where table_schema = 'public' and table_name = 'missions'`.execute(db);
      for (const c of ['id', 'tenant_id', 'user_id', 'idempotency_key', 'created_at', 'result', 'schedule_id', 'parent_id']) {
        assert.ok(
          columns.rows.some((r) => r.column_name === c),
          `missions.${c}`,
        );
      }
    });

    it('does nothing when migrated to latest again', async () => {
      assert.deepEqual(await migrateToLatest(db), []);
      assert.deepEqual(await appTables(db), APP_TABLES);
    });

    it('migrates down, removing every table', async () => {
      await createApiKey(db, { ...owner, capabilities: ['skill.read'] });
      await migrateAllTheWayDown(db);
      assert.deepEqual(await appTables(db), []);
    });

    it('migrates up again after going down', async () => {
      assert.ok((await migrateToLatest(db)).length > 0);
      assert.deepEqual(await appTables(db), APP_TABLES);
      const { key } = await createApiKey(db, { ...owner, capabilities: ['skill.read'] });
      assert.ok(key);
      const rows = await db.selectFrom('api_keys').select('user_id').execute();
      assert.deepEqual(rows, [{ user_id: 'tx' }], 'the tables start empty again');
    });

    it('rolls back a transaction that throws: none of its rows remain', async () => {
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await createApiKey(trx, { tenantId: 'acme', userId: 'rolled-back', capabilities: ['skill.read'] });
          const inside = await trx.selectFrom('api_keys').select('id').where('user_id', '=', 'rolled-back').execute();
          assert.equal(inside.length, 1, 'visible inside the transaction');
          throw new Error('abort the transaction');
        }),
        /abort the transaction/,
      );
      const rows = await db.selectFrom('api_keys').select('id').where('user_id', '=', 'rolled-back').execute();
      assert.deepEqual(rows, []);
    });

    it('commits a transaction that succeeds', async () => {
      await db.transaction().execute((trx) => createApiKey(trx, { tenantId: 'acme', userId: 'committed', capabilities: ['skill.read'] }));
      const rows = await db.selectFrom('api_keys').select('id').where('user_id', '=', 'committed').execute();
      assert.equal(rows.length, 1);
    });

    it('keeps concurrent queries out of an open transaction', async () => {
      let inserted!: () => void;
      const insertedInside = new Promise<void>((ok) => (inserted = ok));
      let finish!: () => void;
      const mayFinish = new Promise<void>((ok) => (finish = ok));
      const tx = db.transaction().execute(async (trx) => {
        await createApiKey(trx, { tenantId: 'acme', userId: 'inside-tx', capabilities: ['skill.read'] });
        inserted();
        await mayFinish;
        throw new Error('roll back the transaction');
      });
      await insertedInside;
      // Issued while the transaction is open: they must neither see its row nor be rolled back with it.
      const outsideWrite = createApiKey(db, { tenantId: 'acme', userId: 'outside-tx', capabilities: ['skill.read'] });
      const outsideRead = db.selectFrom('api_keys').select('user_id').where('user_id', '=', 'inside-tx').execute();
      finish();
      await assert.rejects(tx, /roll back the transaction/);
      await outsideWrite;
      assert.deepEqual(await outsideRead, [], 'an uncommitted row is invisible outside its transaction');
      const users = await db.selectFrom('api_keys').select('user_id').where('user_id', 'in', ['inside-tx', 'outside-tx']).execute();
      assert.deepEqual(users, [{ user_id: 'outside-tx' }], 'the outside write survived the rollback');
    });

    it('runs many concurrent transactions and queries without mixing them up', async () => {
      const work = Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0
          ? db
              .selectFrom('api_keys')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .executeTakeFirstOrThrow()
          : db.transaction().execute(async (trx) => {
              await createApiKey(trx, { tenantId: 'acme', userId: `many-${i}`, capabilities: ['skill.read'] });
              if (i % 3 === 2) throw new Error(`undo ${i}`);
            }),
      );
      const settled = await Promise.allSettled(work);
      assert.equal(settled.filter((s) => s.status === 'rejected').length, 4);
      const users = await db.selectFrom('api_keys').select('user_id').where('user_id', 'like', 'many-%').orderBy('user_id').execute();
      assert.deepEqual(users.map((u) => u.user_id).sort(), ['many-1', 'many-10', 'many-4', 'many-7'].sort());
    });
  });
}

migrationSuite('Postgres', async () => {
  const database = await createTestDatabase({ migrate: false });
  return { db: database.db, close: () => database.drop() };
});

migrationSuite('PGlite', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-pglite-'));
  const { db, kind } = await createDatabase({ dataDir });
  assert.equal(kind, 'pglite');
  return {
    db,
    async close() {
      await db.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe('PGlite data directory', () => {
  it('keeps the migrated schema and rows across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-pglite-'));
    try {
      const first = await createDatabase({ dataDir });
      await migrateToLatest(first.db);
      await createApiKey(first.db, { tenantId: 'acme', userId: 'durable', capabilities: ['skill.read'] });
      await first.db.destroy();

      const second = await createDatabase({ dataDir });
      try {
        assert.deepEqual(await migrateToLatest(second.db), [], 'nothing left to migrate');
        const rows = await second.db.selectFrom('api_keys').select('user_id').execute();
        assert.deepEqual(rows, [{ user_id: 'durable' }]);
      } finally {
        await second.db.destroy();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Postgres connection pool', () => {
  it('survives the server dropping its idle connections, and the next query reconnects', async () => {
    const database = await createTestDatabase();
    try {
      const db = database.db;
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db)));
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        const killed = await admin.query(
          'select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        assert.ok(killed.rows.length > 0, 'the pool had idle connections to drop');
      } finally {
        await admin.end();
      }
      // An idle client learns of its dropped connection asynchronously; a query can still pick one before it does.
      let rows: unknown[] | undefined;
      for (let attempt = 0; attempt < 5 && !rows; attempt++) {
        rows = await sql`select 1 as one`.execute(db).then(
          (r) => r.rows,
          () => undefined,
        );
      }
      assert.deepEqual(rows, [{ one: 1 }]);
    } finally {
      await database.drop();
    }
  });
});
