import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { buildEmbeddings } from '../memory/build-embeddings.ts';
import { NEAR_DUPLICATE_MIN_SCORE, rankByIdentity } from '../skills/near-duplicates.ts';
import { loadDiscoverySet, storeDiscoverySkills } from '../testkit/discovery-eval.ts';

// The near-duplicate check of create_skill on a labelled set (test/fixtures/near-duplicates.json) against the
// discovery fixture skills, on PGlite in a temporary folder. Prints each candidate's closest skill and score, the
// gap between duplicates and distinct skills, and the accuracy at the configured threshold.
// `bash scripts/run.sh node bench/near-duplicates.ts` (EMBEDDINGS_* from the environment apply).
type Candidate = { name: string; description: string; duplicateOf: string | null };
const config = loadConfig(process.env);
const { embeddings } = buildEmbeddings(config);
const { candidates } = JSON.parse(readFileSync(new URL('../test/fixtures/near-duplicates.json', import.meta.url), 'utf8')) as {
  candidates: Candidate[];
};
const dir = mkdtempSync(join(tmpdir(), 'cadenza-near-duplicates-bench-'));
const { db } = await createDatabase({ dataDir: dir });
try {
  await migrateToLatest(db);
  const owner = { tenantId: 'bench', userId: 'near-duplicates' };
  await storeDiscoverySkills(db, owner, loadDiscoverySet().skills, embeddings);
  const rows = [];
  for (const c of candidates) {
    const [closest] = await rankByIdentity({ db, embeddings }, owner, c);
    rows.push({ ...c, closest: closest?.name ?? null, score: closest?.score ?? 0 });
  }
  console.log(
    `near-duplicate check: ${candidates.length} candidates against 10 skills; retrieval full-text + trigram${embeddings ? ' + embeddings' : ''}`,
  );
  for (const r of rows.sort((a, b) => b.score - a.score)) {
    const label = r.duplicateOf ? `dup of ${r.duplicateOf}` : 'distinct';
    console.log(`  ${r.score.toFixed(3)}  ${r.name.padEnd(26)} closest ${String(r.closest).padEnd(22)} ${label}`);
  }
  const dupScores = rows.filter((r) => r.duplicateOf).map((r) => (r.closest === r.duplicateOf ? r.score : 0));
  const distinct = rows.filter((r) => !r.duplicateOf).map((r) => r.score);
  const lowestDup = Math.min(...dupScores);
  const highestDistinct = Math.max(...distinct);
  console.log(
    `lowest duplicate ${lowestDup.toFixed(3)}, highest distinct ${highestDistinct.toFixed(3)}, midpoint ${((lowestDup + highestDistinct) / 2).toFixed(3)}`,
  );
  const t = NEAR_DUPLICATE_MIN_SCORE;
  const caught = rows.filter((r) => r.duplicateOf && r.closest === r.duplicateOf && r.score >= t).length;
  const falseWarnings = distinct.filter((s) => s >= t).length;
  console.log(
    `at NEAR_DUPLICATE_MIN_SCORE=${t}: duplicates warned ${caught}/${dupScores.length}, distinct skills warned ${falseWarnings}/${distinct.length}`,
  );
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
