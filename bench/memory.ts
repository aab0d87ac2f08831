import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { evaluateRetrieval, loadRetrievalSet } from './memory-eval.ts';

// Memory retrieval quality on the labelled set (test/fixtures/memory/retrieval-set.json), on an embedded PGlite
// in a temporary folder: no server needed. `npm run bench:memory`.
const dir = mkdtempSync(join(tmpdir(), 'cadenza-memory-bench-'));
const { db } = await createDatabase({ dataDir: dir });
try {
  await migrateToLatest(db);
  const set = loadRetrievalSet();
  const figures = await evaluateRetrieval(db, set);
  console.log(`memory retrieval: ${set.memories.length} memories, ${set.queries.length} labelled queries (PGlite)`);
  console.log(`${'retriever'.padEnd(20)}${'recall@5'.padStart(10)}${'MRR'.padStart(8)}`);
  for (const [name, f] of Object.entries(figures))
    console.log(`${name.padEnd(20)}${f.recallAt5.toFixed(3).padStart(10)}${f.mrr.toFixed(3).padStart(8)}`);
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
