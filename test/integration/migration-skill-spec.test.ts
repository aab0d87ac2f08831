import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { createDatabase } from '../../db/database.ts';
import { createMigrator } from '../../db/migrator.ts';
import type { Database } from '../../db/schema.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';

// Versions as the registry stored them before migration 007: authored (frontmatter as written) and imported
// (effective frontmatter, allowed-tools normalised to a space-separated string).
const OLD_VERSIONS: Array<[string, Record<string, unknown>]> = [
  ['bare', { name: 'bare', description: 'd' }],
  [
    'authored',
    {
      name: 'authored',
      description: 'd',
      'allowed-tools': ['lab.lookup', 'lab.scan'],
      model: 'forte',
      'max-turns': 7,
      triggers: ['check the lab'],
      not_for: ['book a flight'],
      scripts: [{ name: 'run', path: 'scripts/run.py' }],
    },
  ],
  ['imported', { name: 'imported', description: 'd', 'allowed-tools': ' lab.lookup  crm.find ', model: 'minuet' }],
];

function specMigrationSuite(kind: string, open: () => Promise<{ db: Kysely<Database>; close(): Promise<void> }>) {
  it(`fills the spec of every version stored before it, past the immutability trigger (${kind})`, async () => {
    const { db, close } = await open();
    try {
      await createMigrator(db).migrateTo('2026-12-01-006-feed');
      for (const [name, frontmatter] of OLD_VERSIONS) {
        await sql`insert into skills (id, tenant_id, owner_id, name, description, active_version, status)
                  values (${name}, 'acme', 'old', ${name}, 'd', 1, 'active')`.execute(db);
        await sql`insert into skill_versions (skill_id, version, skill_md, sha256, frontmatter, body)
                  values (${name}, 1, '---', 'x', ${JSON.stringify(frontmatter)}::jsonb, 'Steps.')`.execute(db);
      }
      // Up to 007 exactly (later migrations follow it), so the migrateDown below undoes 007 itself.
      const { error, results } = await createMigrator(db).migrateTo('2026-12-01-007-skill-spec');
      assert.ifError(error);
      assert.deepEqual(
        results?.map((r) => r.migrationName),
        ['2026-12-01-007-skill-spec'],
      );

      const specs = Object.fromEntries(
        (await db.selectFrom('skill_versions').select(['skill_id', 'spec']).execute()).map((r) => [r.skill_id, r.spec]),
      );
      const empty = { triggers: [], notFor: [], scripts: [], approval: [] };
      assert.deepEqual(specs.bare, { tier: 'allegro', allowedTools: [], ...empty });
      assert.deepEqual(specs.authored, {
        tier: 'forte',
        allowedTools: ['lab.lookup', 'lab.scan'],
        maxTurns: 7,
        triggers: ['check the lab'],
        notFor: ['book a flight'],
        scripts: [{ name: 'run', path: 'scripts/run.py' }],
        approval: [],
      });
      assert.deepEqual(specs.imported, { tier: 'minuet', allowedTools: ['lab.lookup', 'crm.find'], ...empty });
      await assert.rejects(
        sql`update skill_versions set body = 'rewritten'`.execute(db),
        /immutable/,
        'the trigger guards versions again after the migration',
      );
      await createMigrator(db).migrateDown();
      const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns
        where table_name = 'skill_versions' and column_name = 'spec'`.execute(db);
      assert.deepEqual(columns.rows, [], 'down removes the column');
    } finally {
      await close();
    }
  });
}

describe('migration 007: the typed skill spec', () => {
  specMigrationSuite('Postgres', async () => {
    const database = await createTestDatabase({ migrate: false });
    return { db: database.db, close: () => database.drop() };
  });
  specMigrationSuite('PGlite', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-pglite-'));
    const { db } = await createDatabase({ dataDir });
    return {
      db,
      async close() {
        await db.destroy();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
});
