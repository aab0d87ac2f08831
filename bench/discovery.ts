import { loadConfig } from '../config/config.ts';
import { buildEmbeddings } from '../memory/build-embeddings.ts';
import type { DiscoveryTuning } from '../skills/discovery-score.ts';
import { benchDatabase, benchVectorSearch } from './bench-database.ts';
import {
  loadCorpusSet,
  loadDiscoverySet,
  loadHeldOutAsks,
  matchAsks,
  scoreDiscovery,
  storeDiscoverySkills,
  storeImportedSkills,
  type LabelledAsk,
  type MatchedAsk,
} from '../testkit/discovery-eval.ts';

// Skill discovery quality, one line per labelled set, on an embedded PGlite in a temporary folder (no server), or with
// TEST_DATABASE_URL on a fresh database of that server (pgvector's search when installed; `--in-process` compares the
// vectors here instead):
// "tuning" over the asks discovery was tuned on (test/fixtures/discovery/asks.json over the fixture skills;
// corpus-asks.json + tuning-asks.json over ../shared/corpus/skills), and, only with `--held-out`, "held out" over
// held-out-asks.json, which nobody tuning discovery reads. DISCOVERY_* and EMBEDDINGS_* from the environment apply (no
// endpoint: the local encoder). `npm run bench:discovery [-- --held-out | --sweep]`; `--sweep` prints the tuning asks
// over a grid of settings.
const config = loadConfig(process.env);
const { embeddings, kind } = buildEmbeddings(config);
const heldOut = process.argv.includes('--held-out');
const sweep = process.argv.includes('--sweep');
const { db, where, drop } = await benchDatabase('cadenza-discovery-bench-');
try {
  const vectors = await benchVectorSearch(db);
  const fixture = loadDiscoverySet();
  const corpus = loadCorpusSet();
  const triggersOwner = { tenantId: 'bench', userId: 'fixture' };
  const corpusOwner = { tenantId: 'bench', userId: 'corpus' };
  await storeDiscoverySkills(db, triggersOwner, fixture.skills, embeddings);
  await storeImportedSkills(db, corpusOwner, corpus.skills, embeddings);
  const base = config.skills.discovery;
  console.log(
    `skill discovery (${where}, vector search ${vectors.kind}), embeddings: ${config.embeddings ? config.embeddings.model : kind}; DISCOVERY_MIN_SCORE=${base.minScore} ` +
      `DISCOVERY_MARGIN=${base.margin} DISCOVERY_EMBEDDING_WEIGHT=${base.embeddingWeight} DISCOVERY_MIN_COSINE=${base.minCosine}`,
  );
  const match = (owner: typeof corpusOwner, asks: LabelledAsk[]) => matchAsks({ db, embeddings, vectors }, owner, asks);
  const sets = [
    { name: 'triggers', label: 'tuning', skills: fixture.skills.length, asks: await match(triggersOwner, fixture.asks) },
    { name: 'corpus', label: 'tuning', skills: corpus.skills.length, asks: await match(corpusOwner, corpus.asks) },
  ];
  if (heldOut)
    sets.push({ name: 'corpus', label: 'held out', skills: corpus.skills.length, asks: await match(corpusOwner, loadHeldOutAsks()) });
  if (sweep)
    printSweep(
      sets.filter((s) => s.label === 'tuning'),
      base,
    );
  else for (const s of sets) printFigures(s, base);
} finally {
  await drop();
}

function printFigures(s: { name: string; label: string; skills: number; asks: MatchedAsk[] }, tuning: DiscoveryTuning) {
  const f = scoreDiscovery(s.asks, tuning);
  console.log(
    `\n${s.name} ${s.label}: ${s.asks.length} asks over ${s.skills} skills; top-1 ${f.top1Accuracy.toFixed(3)} (${f.hits}/${f.positives}), ` +
      `false loads ${f.falseLoads}/${f.negatives} (${f.falseLoadRate.toFixed(3)}), accuracy ${f.accuracy.toFixed(3)}`,
  );
  for (const x of f.mistakes) console.log(`  miss: ${JSON.stringify(x.ask)}: expected ${x.expected ?? 'none'}, got ${x.got ?? 'none'}`);
}

function printSweep(sets: Array<{ name: string; asks: MatchedAsk[] }>, base: DiscoveryTuning) {
  console.log(`tuning asks only: weight floor minScore   ${sets.map((s) => `${s.name} top-1 / false`).join('   ')}`);
  for (const embeddingWeight of [0, 0.2, 0.3, 0.4, 0.5])
    for (const minCosine of embeddingWeight === 0 ? [0] : [0, 0.1, 0.2])
      for (const minScore of [0.12, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19, 0.2, 0.21, 0.22, 0.24]) {
        const tuning = { ...base, minScore, embeddingWeight, minCosine };
        const cells = sets.map((s) => {
          const f = scoreDiscovery(s.asks, tuning);
          return `${f.top1Accuracy.toFixed(3)} / ${f.falseLoadRate.toFixed(3)}`.padStart(s.name.length + 15);
        });
        console.log(
          `${String(embeddingWeight).padStart(23)} ${minCosine.toFixed(1).padStart(5)} ${minScore.toFixed(2).padStart(8)}   ${cells.join('   ')}`,
        );
      }
}
