import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import type { Database } from '../db/schema.ts';

/** The admin URL of the test server (scripts/test.sh starts one and exports it). */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through scripts/test.sh');
  return url;
}

/** A fresh, empty database of its own on the real test Postgres server (for a process to open); `drop()` removes it. */
export async function createEmptyTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = testDatabaseUrl();
  const name = `cadenza_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, `create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(admin, `drop database if exists ${name} with (force)`) };
}

/** A fresh, migrated database of its own on the real test Postgres server; `drop()` removes it. */
export async function createTestDatabase(
  opts: { migrate?: boolean } = {},
): Promise<{ db: Kysely<Database>; url: string; drop(): Promise<void> }> {
  const empty = await createEmptyTestDatabase();
  const { db } = await createDatabase({ databaseUrl: empty.url, dataDir: '.data' });
  if (opts.migrate !== false) await migrateToLatest(db);
  return {
    db,
    url: empty.url,
    async drop() {
      await db.destroy();
      await empty.drop();
    },
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
