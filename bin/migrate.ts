import type { MigrationResultSet } from 'kysely/migration';
import { createDatabase } from '../db/database.ts';
import { createMigrator } from '../db/migrator.ts';
import { loadConfigOrExit } from '../wiring/process-config.ts';

// `npm run migrate` brings the schema to the latest migration; `npm run migrate -- --down` reverts the last one.
// Runs on DATABASE_URL, or on the embedded PGlite under DATA_DIR when it is unset (as bin/cadenza.ts does).
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--up' && a !== '--down');
if (unknown.length > 0 || args.length > 1) {
  process.stderr.write(`usage: node bin/migrate.ts [--up | --down]   (unexpected: ${args.join(' ')})\n`);
  process.exit(1);
}
const down = args.includes('--down');

const config = loadConfigOrExit(process.env);
const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
console.log(`${down ? 'reverting the last migration' : 'migrating to latest'} on ${database.kind} (${database.where})`);
try {
  const migrator = createMigrator(database.db);
  report(down ? await migrator.migrateDown() : await migrator.migrateToLatest());
} finally {
  await database.db.destroy();
}

function report({ error, results = [] }: MigrationResultSet): void {
  for (const r of results) {
    if (r.status === 'Success') console.log(`  ${r.direction === 'Up' ? 'applied ' : 'reverted'}  ${r.migrationName}`);
    else if (r.status === 'NotExecuted') console.log(`  skipped   ${r.migrationName} (an earlier migration failed)`);
  }
  if (error) {
    const failed = results.find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    console.error(failed ? `migration ${failed.migrationName} failed: ${cause}` : `migrations failed: ${cause}`);
    process.exitCode = 1;
  } else if (results.length === 0) {
    console.log(down ? '  nothing to revert' : '  already at the latest migration');
  }
}
