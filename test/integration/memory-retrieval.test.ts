import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { loadRetrievalSet, rankQueries, scoreRetrievers, SPLITS, storeRetrievalSet } from '../../testkit/memory-eval.ts';
import { insertMemory } from '../../db/memories.ts';
import type { Database } from '../../db/schema.ts';
import { createEmbeddingsClient } from '../../memory/embeddings-client.ts';
import { rankMemories, retrieveMemories } from '../../memory/retrieve.ts';
import { selectContextMemories } from '../../memory/context-memories.ts';
import { newestSavedMemories } from '../../db/memory-search.ts';
import { chooseVectorSearch, type VectorSearch } from '../../memory/vector-search.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';

// A stand-in embeddings endpoint: one dimension per concept, so synonyms land close (as real embeddings would).
const CONCEPTS = [
  ['tone', 'voice', 'style'],
  ['money', 'revenue', 'turnover', 'income'],
  ['coffee', 'beans', 'roast'],
];
function embed(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return CONCEPTS.map((c) => words.filter((w) => c.includes(w)).length + 0.01);
}

describe('hybrid memory retrieval on Postgres', () => {
  let db: Kysely<Database>;
  let vectors: VectorSearch;
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, drop } = await createTestDatabase());
    vectors = await chooseVectorSearch(db);
  });
  after(() => drop());

  it('finds the labelled relevant memories on both halves: fused keyword + trigram at least as good as either alone', async () => {
    const set = loadRetrievalSet();
    const fixtureId = await storeRetrievalSet(db, set);
    const figures = scoreRetrievers(await rankQueries({ db, vectors }, fixtureId, set.queries), fixtureId);
    for (const split of SPLITS) {
      const { keyword, trigram, lexical } = figures[split];
      assert.ok(lexical.recallAt5 >= 0.9, `${split}: recall@5 ${lexical.recallAt5}`);
      assert.ok(lexical.mrr >= 0.9, `${split}: MRR ${lexical.mrr}`);
      assert.ok(lexical.recallAt5 >= Math.max(keyword.recallAt5, trigram.recallAt5), JSON.stringify(figures[split]));
    }
  });

  it('keeps one of two near-identical memories and fills the place with another relevant one', async () => {
    const owner = { tenantId: 't', userId: 'dup' };
    for (const content of [
      'The newsletter goes out every Thursday at 7am.',
      'The newsletter goes out every Thursday at 7am!',
      'Newsletter subscribers number about 12,400.',
    ]) {
      await insertMemory(db, { owner, workspaceCode: null, content, source: 'user' });
    }
    const rows = await retrieveMemories({ db, vectors }, { owner }, 'newsletter Thursday', 3);
    const texts = rows.map((r) => r.content);
    assert.equal(texts.filter((t) => t.startsWith('The newsletter goes out')).length, 1, texts.join(' | '));
    assert.ok(texts.includes('Newsletter subscribers number about 12,400.'));
  });

  it("fills a context's free places with the newest saved facts no ranking named, from retrieval's one statement", async () => {
    const owner = { tenantId: 't', userId: 'newest' };
    const facts = [
      'Invoices go out on the first Monday of the month.',
      'The warehouse closes at six in the evening.',
      'Deliveries to Leeds take two working days.',
      'The accountant is called Priya Shah.',
      'Staff badges are printed in blue.',
      'Parking is behind the building, on the left.',
      'The xylqvk order ships on Fridays.',
    ];
    const ids: string[] = [];
    for (const content of facts) ids.push((await insertMemory(db, { owner, workspaceCode: null, content, source: 'user' })).row.id);
    let statements = 0;
    const counted = db.withPlugin({
      transformQuery: (a) => (statements++, a.node),
      transformResult: async (a) => a.result,
    });
    const chosen = await selectContextMemories({ db: counted, vectors }, { owner }, 'xylqvk');
    assert.equal(statements, 1, 'the rankings, the rows and the newest facts in one statement');
    // The newest fact is the one the rankings found; the four places left go to the newest others, newest first.
    const newestOthers = await newestSavedMemories(db, { owner }, 4, [ids[6]!]);
    assert.deepEqual(
      chosen.saved.map((m) => m.content),
      [facts[6], ...newestOthers.map((m) => m.content)],
    );
    assert.deepEqual(
      newestOthers.map((m) => m.content),
      [facts[5], facts[4], facts[3], facts[2]],
    );
    assert.deepEqual(chosen.account.leftOut, { belowRelevance: 2, overBudget: 0, duplicates: 0 });

    // Nothing matches: the five newest of all seven.
    const none = await selectContextMemories({ db, vectors }, { owner }, 'qqqq');
    assert.deepEqual(
      none.saved.map((m) => m.content),
      [6, 5, 4, 3, 2].map((i) => facts[i]),
    );
  });

  describe('with an embeddings endpoint', () => {
    let server: Server;
    let url: string;
    let requests = 0;
    before(async () => {
      server = createServer((req, res) => {
        let raw = '';
        req.on('data', (c: Buffer) => (raw += c.toString()));
        req.on('end', () => {
          requests++;
          const { input } = JSON.parse(raw) as { input: string[] };
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embed(t) })) }));
        });
      });
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
    });
    after(() => new Promise<void>((ok) => server.close(() => ok())));

    it('adds a semantic ranking to the fusion: a memory sharing no word with the query is found', async () => {
      const embeddings = createEmbeddingsClient({ baseUrl: url, apiKey: 'k', model: 'fake' });
      const owner = { tenantId: 't', userId: 'sem' };
      const ask = 'What style should we write in?';
      const ids: string[] = [];
      for (const content of [
        'Brand voice: warm, plain-spoken.',
        'Deliveries go out on Tuesdays.',
        'We should write the annual report in May.',
      ]) {
        ids.push(
          (
            await insertMemory(db, {
              owner,
              workspaceCode: null,
              content,
              source: 'user',
              embedding: { model: embeddings.model, vector: embed(content) },
            })
          ).row.id,
        );
      }
      const lexical = await rankMemories({ db, vectors }, { owner }, ask);
      assert.ok(!lexical.keyword.includes(ids[0]!), 'no shared word: full-text search misses it');
      const ranked = await rankMemories({ db, embeddings, vectors }, { owner }, ask);
      assert.equal(ranked.embedding?.[0]?.id, ids[0], 'the embedding ranking puts it first');
      const top = await retrieveMemories({ db, embeddings, vectors }, { owner }, ask, 2);
      assert.ok(
        top.some((r) => r.content.startsWith('Brand voice')),
        top.map((r) => r.content).join(' | '),
      );
      assert.ok(requests > 0);
    });

    it('falls back to keyword and trigram when the endpoint fails', async () => {
      const broken = createEmbeddingsClient({ baseUrl: 'http://127.0.0.1:1', apiKey: undefined, model: 'fake' });
      const ranked = await rankMemories(
        { db, embeddings: broken, vectors },
        { owner: { tenantId: 't', userId: 'sem' } },
        'deliveries Tuesday',
      );
      assert.equal(ranked.embedding, undefined);
      assert.ok(ranked.keyword.length > 0);
    });
  });
});
