import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createEmbeddingsClient } from '../memory/embeddings-client.ts';
import { evaluateDiscovery, loadDiscoverySet, storeDiscoverySkills } from './discovery-eval.ts';

// Skill discovery quality on the labelled set (test/fixtures/discovery), on an embedded PGlite in a temporary
// folder: no server needed. DISCOVERY_* and EMBEDDINGS_* from the environment apply. `npm run bench:discovery`.
const config = loadConfig(process.env);
const embeddings = config.embeddings ? createEmbeddingsClient(config.embeddings) : undefined;
const dir = mkdtempSync(join(tmpdir(), 'cadenza-discovery-bench-'));
const { db } = await createDatabase({ dataDir: dir });
try {
  await migrateToLatest(db);
  const owner = { tenantId: 'bench', userId: 'discovery' };
  const { skills, asks } = loadDiscoverySet();
  await storeDiscoverySkills(db, owner, skills, embeddings);
  const f = await evaluateDiscovery({ db, tuning: config.skills.discovery, embeddings }, owner, asks);
  const { minScore, margin } = config.skills.discovery;
  console.log(
    `skill discovery: ${skills.length} skills, ${asks.length} labelled asks (${f.positives} should load a skill, ${f.negatives} should load none)`,
  );
  console.log(
    `retrieval: full-text + trigram${embeddings ? ' + embeddings' : ''} (PGlite); DISCOVERY_MIN_SCORE=${minScore} DISCOVERY_MARGIN=${margin}`,
  );
  console.log(`top-1 accuracy   ${f.top1Accuracy.toFixed(3)}`);
  console.log(`false-load rate  ${f.falseLoadRate.toFixed(3)}`);
  for (const m of f.mistakes) console.log(`  ${JSON.stringify(m.ask)}: expected ${m.expected ?? 'none'}, got ${m.got ?? 'none'}`);
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
