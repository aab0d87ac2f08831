import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { discoveryChunksQuery } from '../db/discovery-candidates.ts';
import { memoryCandidatesQuery } from '../db/memory-candidates.ts';
import { nearestMemoriesQuery, type MemoryScope } from '../db/memory-search.ts';
import { efSearchFor, hasPgvector, withIterativeScan } from '../db/pgvector.ts';
import type { Database } from '../db/schema.ts';
import { createSkill } from '../db/skills.ts';
import { nearestChunksQuery } from '../db/skill-discovery.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { retrieveMemories } from '../memory/retrieve.ts';
import { IN_PROCESS_SEARCH, PGVECTOR_SEARCH } from '../memory/vector-search.ts';
import { discoverSkills } from '../skills/discover-skills.ts';
import { parseSkillMd } from '../skills/skill-md.ts';
import { newVersion } from '../skills/skill-version.ts';
import { createTestDatabase } from '../testkit/test-database.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'vector-search';
/** The user's memories, and another user's (whose must never come back). */
const MEMORIES = Number(process.env.VECTOR_BENCH_MEMORIES ?? 100_000);
const OTHER_MEMORIES = 20_000;
/** The user's active skills (their chunks are what parsing each synthetic SKILL.md gives). */
const SKILLS = Number(process.env.VECTOR_BENCH_SKILLS ?? 10_000);
const QUERIES = 100;
const IN_PROCESS_DISCOVERIES = 20;
const DIMS = 384;
/** Topics the synthetic vectors cluster around (a random vector per topic; each row is its topic's plus noise). */
const TOPICS = 2_000;
const MODEL = 'bench:synthetic-384';
/** Retrieval's and discovery's candidate counts (memory/retrieve.ts CANDIDATES, skills/discover-skills.ts NEAREST_CHUNKS). */
const MEMORY_K = 30;
const CHUNK_K = 200;
const OWNER = { tenantId: 'bench', userId: 'many' };
const OTHER = { tenantId: 'bench', userId: 'other' };

/**
 * Nearest-neighbour search of stored vectors, pgvector's HNSW indexes (migration 041) against comparison in process,
 * on SYNTHETIC data: one user with MEMORIES memories and SKILLS active skills, plus another user's
 * OTHER_MEMORIES memories, every row with a random 384-wide vector clustered around one of 2,000 random topics (noise
 * of the same scale as the topic, so a topic's rows are near each other and far from the rest) and a text of
 * ten words drawn from the topic's own small vocabulary. Queries are a topic's vector plus fresh noise, given to
 * retrieval and discovery by an encoder that maps each query text to its vector. Prints the plans (EXPLAIN ANALYZE:
 * the HNSW index must be the one scanned), median and p95 of the vector search alone and of the whole retrieval
 * (keyword + trigram + vectors, fused) and discovery, for both mechanisms, and recall@k of each against an exact
 * search over all of the user's vectors. In process compares the newest 5,000 memories only, as it always has.
 */
export async function run(): Promise<Row[]> {
  const { db, drop } = await createTestDatabase();
  try {
    if (!(await hasPgvector(db))) throw new Error('pgvector is not installed in the test Postgres (scripts/pgvector.sh)');
    const rand = random(36);
    const topics = Array.from({ length: TOPICS }, () => unit(gaussian(rand, DIMS)));
    const words = Array.from({ length: TOPICS }, (_, t) => Array.from({ length: 6 }, (_, w) => `t${t}w${w}`));
    const indexes = await dropVectorIndexes(db);
    const memories = await loadMemories(db, rand, topics, words);
    await rebuild(
      db,
      indexes.filter((i) => i.name.startsWith('memories_')),
    );
    const chunks = await loadSkills(db, rand, topics, words);
    await rebuild(
      db,
      indexes.filter((i) => i.name.startsWith('skill_chunks_')),
    );
    const queries = Array.from({ length: QUERIES }, () => {
      const topic = Math.floor(rand() * TOPICS);
      const vector = unit(near(rand, topics[topic]!));
      return { topic, text: sentence(rand, words[topic]!, 6), vector, array: [...vector] };
    });
    const embeddings = queryEncoder(queries);
    const scope: MemoryScope = { owner: OWNER };

    const rows: Row[] = [
      {
        bench: BENCH,
        figure: 'data',
        value: `SYNTHETIC: ${MEMORIES} memories (+${OTHER_MEMORIES} of another user) + ${SKILLS} skills (${chunks.keys.length} chunks), ${DIMS} wide, ${TOPICS} topics`,
      },
    ];
    rows.push(...(await plans(db, scope, queries[0]!.array)), ...(await lexicalPlans(db, scope, queries[0]!.text)));

    const exactMemories = queries.map((q) => exactTop(memories.vectors, q.vector, MEMORY_K));
    for (const vectors of [PGVECTOR_SEARCH, IN_PROCESS_SEARCH]) {
      const deps = { db, embeddings, vectors };
      await retrieveMemories(deps, scope, queries[0]!.text); // warm-up (the in-process vector cache fills here)
      const search: number[] = [];
      const whole: number[] = [];
      let found = 0;
      let found10 = 0;
      let foreign = 0;
      for (const [i, q] of queries.entries()) {
        let t = performance.now();
        const got = await vectors.memories(db, scope, MODEL, q.array, MEMORY_K);
        search.push(performance.now() - t);
        const ids = new Set(got.map((g) => g.id));
        found += exactMemories[i]!.filter((j) => ids.has(memories.ids[j]!)).length;
        const top10 = new Set(got.slice(0, 10).map((g) => g.id));
        found10 += exactMemories[i]!.slice(0, 10).filter((j) => top10.has(memories.ids[j]!)).length;
        foreign += got.filter((g) => memories.other.has(g.id)).length;
        t = performance.now();
        await retrieveMemories(deps, scope, q.text);
        whole.push(performance.now() - t);
      }
      const recall = found / (QUERIES * MEMORY_K);
      rows.push(
        timing(`memory vector search, ${vectors.kind} (k=${MEMORY_K})`, search),
        timing(`memory retrieval, ${vectors.kind} (whole: keyword + trigram + vectors)`, whole),
        { bench: BENCH, figure: `memory recall@${MEMORY_K}, ${vectors.kind} vs exact over all`, value: recall.toFixed(3) },
        { bench: BENCH, figure: `memory recall@10, ${vectors.kind} vs exact over all`, value: (found10 / (QUERIES * 10)).toFixed(3) },
        { bench: BENCH, figure: `memories of another user returned, ${vectors.kind}`, value: String(foreign) },
      );
      log(BENCH, `memories through ${vectors.kind}: recall ${recall.toFixed(3)}`);
    }

    const exactChunks = queries.map((q) => exactTop(chunks.vectors, q.vector, CHUNK_K));
    for (const vectors of [PGVECTOR_SEARCH, IN_PROCESS_SEARCH]) {
      const deps = { db, embeddings, vectors, tuning: { minScore: 0.19, margin: 0.05, embeddingWeight: 0.3, minCosine: 0 } };
      await discoverSkills(deps, OWNER, queries[0]!.text);
      const search: number[] = [];
      const whole: number[] = [];
      let found = 0;
      // In process, each discovery reads every chunk's vector (seconds at this size): fewer queries.
      const asked = vectors.kind === 'in-process' ? queries.slice(0, IN_PROCESS_DISCOVERIES) : queries;
      for (const [i, q] of asked.entries()) {
        let t = performance.now();
        const cosines = await vectors.chunks(db, OWNER, MODEL, q.array, CHUNK_K);
        search.push(performance.now() - t);
        const nearest = [...cosines].sort((a, b) => b[1] - a[1]).slice(0, CHUNK_K);
        const keys = new Set(nearest.map(([key]) => key));
        found += exactChunks[i]!.filter((j) => keys.has(chunks.keys[j]!)).length;
        t = performance.now();
        await discoverSkills(deps, OWNER, q.text);
        whole.push(performance.now() - t);
      }
      const recall = found / (asked.length * CHUNK_K);
      rows.push(
        timing(`skill-chunk vector search, ${vectors.kind} (k=${CHUNK_K})`, search),
        timing(`discovery, ${vectors.kind} (whole: lexical candidates + vectors)`, whole),
        { bench: BENCH, figure: `chunk recall@${CHUNK_K}, ${vectors.kind} vs exact`, value: recall.toFixed(3) },
      );
      log(BENCH, `discovery through ${vectors.kind}: recall ${recall.toFixed(3)}`);
    }
    return rows;
  } finally {
    await drop();
  }
}

function timing(figure: string, samples: number[]): Row {
  return { bench: BENCH, figure: `${figure}: median · p95`, value: `${fmtMs(median(samples))} · ${fmtMs(percentile(samples, 95))}` };
}

/** The plans of both nearest-neighbour queries, as pgvector runs them: each must scan its HNSW index. */
async function plans(db: Kysely<Database>, scope: MemoryScope, query: number[]): Promise<Row[]> {
  const explain = async (q: { explain: (f: 'text', m: ReturnType<typeof sql>) => Promise<Array<Record<string, unknown>>> }) =>
    (await q.explain('text', sql`analyze, buffers off`)).map((r) => String(Object.values(r)[0]));
  const memoryPlan = await withIterativeScan(db, efSearchFor(MEMORY_K), (trx) =>
    explain(nearestMemoriesQuery(trx, scope, MODEL, query, MEMORY_K)),
  );
  const chunkPlan = await withIterativeScan(db, efSearchFor(CHUNK_K), (trx) =>
    explain(nearestChunksQuery(trx, OWNER, MODEL, query, CHUNK_K)),
  );
  log(BENCH, `memory plan:\n${memoryPlan.join('\n')}`);
  log(BENCH, `chunk plan:\n${chunkPlan.join('\n')}`);
  const index = (plan: string[]) =>
    plan
      .find((l) => /Index Scan using \w+_embedding_\d+/.test(l))
      ?.trim()
      .replace(/\s+\(cost.*$/, '') ?? 'NO HNSW INDEX SCAN';
  return [
    { bench: BENCH, figure: 'memory query plan', value: index(memoryPlan) },
    { bench: BENCH, figure: 'chunk query plan', value: index(chunkPlan) },
  ];
}

/**
 * The plans of the lexical statements at this size (memory retrieval's candidates, discovery's chunks): the indexes
 * each scans, so a query that reads every row of the owner shows as scanning none but the owner's.
 */
async function lexicalPlans(db: Kysely<Database>, scope: MemoryScope, text: string): Promise<Row[]> {
  const memory = await memoryCandidatesQuery(db, scope, text, 30).explain('text', sql`analyze, buffers off`);
  const discovery = await sql<Record<string, unknown>>`explain (analyze, buffers off) ${discoveryChunksQuery(OWNER, text, [])}`.execute(db);
  const lines = (plan: Array<Record<string, unknown>>) => plan.map((r) => String(Object.values(r)[0]));
  const [memoryPlan, discoveryPlan] = [lines(memory), lines(discovery.rows)];
  log(BENCH, `memory candidates plan:\n${memoryPlan.join('\n')}`);
  log(BENCH, `discovery chunks plan:\n${discoveryPlan.join('\n')}`);
  const indexes = (plan: string[]) =>
    [...new Set(plan.flatMap((l) => [...l.matchAll(/Index (?:Only )?Scan (?:using|on) (\w+)/g)].map((m) => m[1]!)))].join(', ') ||
    'NO INDEX SCAN';
  const total = (plan: string[]) => plan.find((l) => l.startsWith('Execution Time'))?.replace('Execution Time: ', '') ?? '?';
  return [
    {
      bench: BENCH,
      figure: 'memory candidates statement: indexes scanned · execution time',
      value: `${indexes(memoryPlan)} · ${total(memoryPlan)}`,
    },
    {
      bench: BENCH,
      figure: 'discovery chunks statement: indexes scanned · execution time',
      value: `${indexes(discoveryPlan)} · ${total(discoveryPlan)}`,
    },
  ];
}

type Loaded = { ids: string[]; vectors: Float32Array[]; other: Set<string> };

/** Both users' memories, in batches (the vector and text indexes are dropped during the load and built after it, as a bulk load should). */
async function loadMemories(db: Kysely<Database>, rand: () => number, topics: Float32Array[], words: string[][]): Promise<Loaded> {
  const loaded: Loaded = { ids: [], vectors: [], other: new Set() };
  const started = performance.now();
  for (const [owner, count] of [
    [OTHER, OTHER_MEMORIES],
    [OWNER, MEMORIES],
  ] as const) {
    for (let i = 0; i < count; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - i) }, () => {
        const topic = Math.floor(rand() * TOPICS);
        const vector = unit(near(rand, topics[topic]!));
        return { topic, vector, content: sentence(rand, words[topic]!, 10) };
      });
      const ids = await db
        .insertInto('memories')
        .values(
          batch.map((m) => ({
            id: randomUUID(),
            tenant_id: owner.tenantId,
            user_id: owner.userId,
            workspace_code: null,
            content: m.content,
            source: 'user',
            embedding: [...m.vector],
            embedding_model: MODEL,
          })),
        )
        .returning('id')
        .execute();
      ids.forEach((r, j) => {
        if (owner === OTHER) loaded.other.add(r.id);
        else {
          loaded.ids.push(r.id);
          loaded.vectors.push(batch[j]!.vector);
        }
      });
    }
  }
  log(BENCH, `memories loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return loaded;
}

/** SKILLS skills stored as authoring does (createSkill), each chunk given its topic's vector plus noise. */
async function loadSkills(db: Kysely<Database>, rand: () => number, topics: Float32Array[], words: string[][]) {
  const loaded = { keys: [] as string[], vectors: [] as Float32Array[] };
  const started = performance.now();
  for (let s = 0; s < SKILLS; s++) {
    const topic = Math.floor(rand() * TOPICS);
    const w = words[topic]!;
    const md = [
      '---',
      `name: skill-${s}`,
      `description: ${sentence(rand, w, 8)}.`,
      'metadata:',
      `  cadenza-triggers: "${sentence(rand, w, 4)}"`,
      '---',
      '',
      ...Array.from({ length: 3 }, () => `- ${sentence(rand, w, 9)}.`),
      '',
    ].join('\n');
    const parsed = parseSkillMd(md, { folder: `skill-${s}` });
    if (!parsed.ok) throw new Error(`synthetic skill ${s}: ${JSON.stringify(parsed.errors)}`);
    const version = newVersion(md, parsed.skill);
    const chunks = version.chunks.map((c) => ({ ...c, embedding: { model: MODEL, vector: [...unit(near(rand, topics[topic]!))] } }));
    const row = await createSkill(db, OWNER, { ...version, chunks, source: 'authored', status: 'active' });
    chunks.forEach((c, ordinal) => {
      loaded.keys.push(`${row.id}:1:${ordinal}`);
      loaded.vectors.push(Float32Array.from(c.embedding.vector));
    });
  }
  log(BENCH, `skills loaded in ${((performance.now() - started) / 1000).toFixed(0)} s (${loaded.keys.length} chunks)`);
  return loaded;
}

async function dropVectorIndexes(db: Kysely<Database>): Promise<Array<{ name: string; def: string }>> {
  const { rows } = await sql<{ name: string; def: string }>`
    select indexname as name, indexdef as def from pg_indexes
    where indexname ~ '^(memories|skill_chunks)_(embedding_\\d+|search|trgm)$'`.execute(db);
  for (const r of rows) await sql`drop index ${sql.raw(r.name)}`.execute(db);
  return rows;
}

/** The migration's own index definitions, built again over the loaded rows; then ANALYZE, so the planner knows them. */
async function rebuild(db: Kysely<Database>, indexes: Array<{ name: string; def: string }>) {
  const started = performance.now();
  await db.connection().execute(async (c) => {
    await sql`set maintenance_work_mem = '1GB'`.execute(c);
    for (const i of indexes) await sql.raw(i.def).execute(c);
  });
  await sql`analyze memories`.execute(db);
  await sql`analyze skill_chunks`.execute(db);
  await sql`analyze skills`.execute(db);
  log(BENCH, `${indexes.length} indexes built and analyzed in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** An encoder that knows the bench's queries only: each text maps to its vector. */
function queryEncoder(queries: Array<{ text: string; vector: Float32Array }>): EmbeddingsClient {
  const byText = new Map(queries.map((q) => [q.text, [...q.vector]]));
  return {
    model: MODEL,
    async embed(texts) {
      return texts.map((t) => byText.get(t) ?? [...unit(new Float32Array(DIMS).fill(1))]);
    },
  };
}

/** Indexes of the k vectors nearest to `q` by cosine (all unit length: the dot product), exactly. */
function exactTop(vectors: Float32Array[], q: Float32Array, k: number): number[] {
  const scored = vectors.map((v, i) => {
    let dot = 0;
    for (let d = 0; d < DIMS; d++) dot += v[d]! * q[d]!;
    return { i, dot };
  });
  return scored
    .sort((a, b) => b.dot - a.dot)
    .slice(0, k)
    .map((s) => s.i);
}

function sentence(rand: () => number, vocabulary: string[], n: number): string {
  return Array.from({ length: n }, () => vocabulary[Math.floor(rand() * vocabulary.length)]).join(' ');
}

/** A topic's vector plus Gaussian noise of the same scale. */
function near(rand: () => number, topic: Float32Array): Float32Array {
  const noise = unit(gaussian(rand, DIMS));
  return topic.map((x, d) => x + noise[d]!);
}

function gaussian(rand: () => number, n: number): Float32Array {
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand()));
}

function unit(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** A seeded generator (mulberry32): the same data on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
