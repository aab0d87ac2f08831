import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { buildEmbeddings } from '../memory/build-embeddings.ts';
import { EMBEDDING_WEIGHT, type DiscoveryTuning } from '../skills/discovery-score.ts';
import {
  evaluateDiscovery,
  loadCorpusSet,
  loadDiscoverySet,
  storeDiscoverySkills,
  storeImportedSkills,
  type LabelledAsk,
} from './discovery-eval.ts';
import { SPLITS } from './memory-eval.ts';

// Skill discovery quality on two labelled sets, each split into tuning and held-out asks: the fixture skills with
// triggers and not_for (test/fixtures/discovery) and the real-world corpus (../shared/corpus/skills: a name and a
// description only). Lexical only, embeddings only and fused, side by side; on an embedded PGlite in a temporary
// folder, no server needed. DISCOVERY_* and EMBEDDINGS_* from the environment apply (no endpoint: the local
// encoder). `npm run bench:discovery`; `-- --sweep` prints the tuning asks over a grid of settings, nothing held out.
const config = loadConfig(process.env);
const embeddings = buildEmbeddings(config);
const sweep = process.argv.includes('--sweep');
const dir = mkdtempSync(join(tmpdir(), 'cadenza-discovery-bench-'));
const { db } = await createDatabase({ dataDir: dir });
try {
  await migrateToLatest(db);
  const fixture = loadDiscoverySet();
  const corpus = loadCorpusSet();
  const sets = [
    { name: 'triggers', owner: { tenantId: 'bench', userId: 'fixture' }, skills: fixture.skills, asks: fixture.asks },
    { name: 'corpus', owner: { tenantId: 'bench', userId: 'corpus' }, skills: corpus.skills, asks: corpus.asks },
  ];
  await storeDiscoverySkills(db, sets[0]!.owner, fixture.skills, embeddings);
  await storeImportedSkills(db, sets[1]!.owner, corpus.skills, embeddings);
  const base = config.skills.discovery;
  console.log(
    `skill discovery (PGlite), embeddings: ${config.embeddings ? config.embeddings.model : 'local'}; ` +
      `DISCOVERY_MIN_SCORE=${base.minScore} DISCOVERY_MARGIN=${base.margin}, embedding weight ${EMBEDDING_WEIGHT}`,
  );
  const score = (tuning: DiscoveryTuning, asks: LabelledAsk[], owner: { tenantId: string; userId: string }, embed = true) =>
    evaluateDiscovery({ db, tuning, embeddings: embed ? embeddings : undefined }, owner, asks);
  if (sweep) {
    console.log('tuning asks only: weight minScore   triggers top-1 / false   corpus top-1 / false');
    for (const embeddingWeight of [0.3, 0.5, 0.7, 0.85])
      for (const minScore of [0.1, 0.15, 0.2, 0.25, 0.3]) {
        const tuning = { ...base, minScore, embeddingWeight };
        const row = [];
        for (const s of sets) {
          const f = await score(
            tuning,
            s.asks.filter((a) => a.split === 'tune'),
            s.owner,
          );
          row.push(`${f.top1Accuracy.toFixed(3)} / ${f.falseLoadRate.toFixed(3)}`);
        }
        console.log(`${String(embeddingWeight).padStart(25)} ${minScore.toFixed(2).padStart(8)}   ${row.join('        ')}`);
      }
  } else {
    for (const s of sets) {
      const positives = SPLITS.map((split) => s.asks.filter((a) => a.split === split && a.expect !== null).length);
      const negatives = SPLITS.map((split) => s.asks.filter((a) => a.split === split && a.expect === null).length);
      console.log(
        `\n${s.name} set: ${s.skills.length} skills; tune ${positives[0]} asks + ${negatives[0]} for none, held-out ${positives[1]} + ${negatives[1]}`,
      );
      console.log(
        `${'retrieval'.padEnd(12)}${'tune top-1'.padStart(11)}${'false'.padStart(7)}${'held-out top-1'.padStart(16)}${'false'.padStart(7)}`,
      );
      const mistakes: string[] = [];
      for (const [mode, tuning, embed] of [
        ['lexical', base, false],
        ['embeddings', { ...base, embeddingWeight: 1 }, true],
        ['fused', base, true],
      ] as const) {
        const figures = [];
        for (const split of SPLITS) {
          const f = await score(
            tuning,
            s.asks.filter((a) => a.split === split),
            s.owner,
            embed,
          );
          figures.push(`${f.top1Accuracy.toFixed(3).padStart(split === 'tune' ? 11 : 16)}${f.falseLoadRate.toFixed(3).padStart(7)}`);
          if (mode === 'fused' && split === 'held-out')
            for (const m of f.mistakes)
              mistakes.push(`  ${JSON.stringify(m.ask)}: expected ${m.expected ?? 'none'}, got ${m.got ?? 'none'}`);
        }
        console.log(`${mode.padEnd(12)}${figures.join('')}`);
      }
      if (mistakes.length) console.log(`fused, held-out mistakes:\n${mistakes.join('\n')}`);
    }
  }
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
