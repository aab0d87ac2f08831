import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import type { Database } from '../db/schema.ts';
import { chooseVectorSearch, IN_PROCESS_SEARCH, type VectorSearch } from '../memory/vector-search.ts';
import { createTestDatabase } from '../testkit/test-database.ts';

/**
 * A migrated database for a quality bench: a fresh one on the TEST_DATABASE_URL server when set (scripts/bench.sh
 * starts one, with pgvector), else an embedded PGlite in a temporary folder; `where` says which.
 */
export async function benchDatabase(prefix: string): Promise<{ db: Kysely<Database>; where: string; drop(): Promise<void> }> {
  if (process.env.TEST_DATABASE_URL) {
    const { db, drop } = await createTestDatabase();
    return { db, where: 'Postgres server', drop };
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const { db } = await createDatabase({ dataDir: dir });
  await migrateToLatest(db);
  return {
    db,
    where: 'PGlite',
    async drop() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The vector search the database allows, as a process would choose it; in process with `--in-process`. */
export async function benchVectorSearch(db: Kysely<Database>): Promise<VectorSearch> {
  return process.argv.includes('--in-process') ? IN_PROCESS_SEARCH : chooseVectorSearch(db);
}
