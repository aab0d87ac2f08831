import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { buildEmbeddings } from '../memory/build-embeddings.ts';
import {
  loadCorpusSet,
  loadDiscoverySet,
  matchAsks,
  scoreDiscovery,
  storeDiscoverySkills,
  storeImportedSkills,
  type MatchedAsk,
} from './discovery-eval.ts';
import { SPLITS, type Split } from './memory-eval.ts';

// Skill discovery quality on two labelled sets, each split into tuning and held-out asks: the fixture skills with
// triggers and not_for (test/fixtures/discovery) and the real-world corpus (../shared/corpus/skills: a name and a
// description only). Lexical only, embeddings only and fused, side by side; on an embedded PGlite in a temporary
// folder, no server needed. DISCOVERY_* and EMBEDDINGS_* from the environment apply (no endpoint: the local
// encoder). `npm run bench:discovery`; `-- --sweep` prints the tuning asks over a grid of settings, nothing held out.
const config = loadConfig(process.env);
const { embeddings, kind } = buildEmbeddings(config);
const sweep = process.argv.includes('--sweep');
// The fused row with the configured weight, or, where that is 0 (the local encoder), discovery's usual 0.5.
const FUSED_WEIGHT = 0.5;
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
    `skill discovery (PGlite), embeddings: ${config.embeddings ? config.embeddings.model : kind}; ` +
      `DISCOVERY_MIN_SCORE=${base.minScore} DISCOVERY_MARGIN=${base.margin}, DISCOVERY_EMBEDDING_WEIGHT=${base.embeddingWeight}`,
  );
  const matched: Array<(typeof sets)[number] & { matched: MatchedAsk[] }> = [];
  for (const s of sets) matched.push({ ...s, matched: await matchAsks({ db, embeddings }, s.owner, s.asks) });
  const of = (m: (typeof matched)[number], split: Split) => m.matched.filter((a) => a.split === split);
  if (sweep) {
    console.log('tuning asks only:  weight floor minScore   triggers top-1 / false   corpus top-1 / false');
    const grid: Array<[number, number]> = [[0, 0]];
    for (const w of [0.2, 0.3, 0.4, 0.5, 0.7]) for (const c of [0.1, 0.2, 0.3, 0.4, 0.5]) grid.push([w, c]);
    for (const [embeddingWeight, minCosine] of grid)
      for (const minScore of [0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3]) {
        const tuning = { ...base, minScore, embeddingWeight, minCosine };
        const row = matched.map((m) => {
          const f = scoreDiscovery(of(m, 'tune'), tuning, embeddingWeight > 0);
          return `${f.top1Accuracy.toFixed(3)} / ${f.falseLoadRate.toFixed(3)}`;
        });
        const label =
          embeddingWeight === 0 ? 'lexical'.padStart(12) : `${String(embeddingWeight).padStart(6)} ${minCosine.toFixed(1).padStart(5)}`;
        console.log(`${label.padStart(24)} ${minScore.toFixed(2).padStart(8)}   ${row.join('        ')}`);
      }
  } else {
    for (const m of matched) {
      const positives = SPLITS.map((split) => of(m, split).filter((a) => a.expect !== null).length);
      const negatives = SPLITS.map((split) => of(m, split).filter((a) => a.expect === null).length);
      console.log(
        `\n${m.name} set: ${m.skills.length} skills; tune ${positives[0]} asks + ${negatives[0]} for none, held-out ${positives[1]} + ${negatives[1]}`,
      );
      console.log(
        `${'retrieval'.padEnd(12)}${'tune top-1'.padStart(11)}${'false'.padStart(7)}${'held-out top-1'.padStart(16)}${'false'.padStart(7)}`,
      );
      const mistakes: string[] = [];
      // The held-out mistakes of what ships: lexical when the configured weight is 0, else fused.
      const shipped = base.embeddingWeight === 0 ? 'lexical' : 'fused';
      for (const [mode, tuning, embed] of [
        ['lexical', base, false],
        ['embeddings', { ...base, embeddingWeight: 1 }, true],
        ['fused', { ...base, embeddingWeight: base.embeddingWeight || FUSED_WEIGHT }, true],
      ] as const) {
        const cells = SPLITS.map((split) => {
          const f = scoreDiscovery(of(m, split), tuning, embed);
          if (mode === shipped && split === 'held_out')
            for (const x of f.mistakes)
              mistakes.push(`  ${JSON.stringify(x.ask)}: expected ${x.expected ?? 'none'}, got ${x.got ?? 'none'}`);
          return `${f.top1Accuracy.toFixed(3).padStart(split === 'tune' ? 11 : 16)}${f.falseLoadRate.toFixed(3).padStart(7)}`;
        });
        console.log(`${mode.padEnd(12)}${cells.join('')}`);
      }
      if (mistakes.length) console.log(`${shipped}, held-out mistakes:\n${mistakes.join('\n')}`);
    }
  }
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
