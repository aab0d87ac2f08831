import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { storeDiscoverySkills } from '../../testkit/discovery-eval.ts';
import { insertMemory } from '../../db/memories.ts';
import type { Database } from '../../db/schema.ts';
import { matchSkillChunks } from '../../db/skill-discovery.ts';
import { createLogger } from '../../lib/logger.ts';
import { createEmbeddingsClient } from '../../memory/embeddings-client.ts';
import { reembedStoredVectors } from '../../memory/reembed.ts';
import { embedForStorage, rankMemories } from '../../memory/retrieve.ts';
import { chooseVectorSearch } from '../../memory/vector-search.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';
import { skillMd } from '../../testkit/test-stack.ts';

// Two embedding models of the same width (3) behind one endpoint: "concepts" puts tone, money and coffee words on axes
// 0, 1 and 2; "concepts-reversed" on axes 2, 1 and 0. Each is right on its own; a vector of one compared with a
// query of the other is nonsense of the right length.
const CONCEPTS = [
  ['tone', 'voice', 'style'],
  ['money', 'revenue', 'turnover', 'income'],
  ['coffee', 'beans', 'roast'],
];
function concepts(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return CONCEPTS.map((c) => words.filter((w) => c.includes(w)).length + 0.01);
}
const MODELS: Record<string, (text: string) => number[]> = {
  concepts,
  'concepts-reversed': (text) => concepts(text).reverse(),
};

const owner = { tenantId: 't', userId: 'swap' };
const VOICE = 'Brand voice: warm, plain-spoken.';
const COFFEE = 'We roast coffee beans on Mondays.';
const ASK = 'What style should we write in?';

describe('stored vectors record their encoder: a model swapped for another of the same width is noticed', () => {
  let db: Kysely<Database>;
  let drop: () => Promise<void>;
  let server: Server;
  let url: string;
  before(async () => {
    ({ db, drop } = await createTestDatabase());
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const { model, input } = JSON.parse(raw) as { model: string; input: string[] };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: MODELS[model]!(t) })) }));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });
  after(async () => {
    await new Promise<void>((ok) => server.close(() => ok()));
    await drop();
  });

  it('never compares the old model’s vectors with the new one’s, and re-embeds memories and skill chunks for it', async () => {
    const before = createEmbeddingsClient({ baseUrl: url, apiKey: undefined, model: 'concepts' });
    const after = createEmbeddingsClient({ baseUrl: url, apiKey: undefined, model: 'concepts-reversed' });
    const ids: Record<string, string> = {};
    for (const content of [VOICE, COFFEE]) {
      const embedding = await embedForStorage({ db, embeddings: before }, content);
      assert.deepEqual(embedding?.model, 'endpoint:concepts', 'the vector is stored with the name of its model');
      ids[content] = (await insertMemory(db, { owner, workspaceCode: null, content, source: 'user', embedding })).row.id;
    }
    await storeDiscoverySkills(db, owner, [{ folder: 'roaster', skillMd: skillMd({ name: 'roaster' }) }], before);
    assert.equal(
      (await rankMemories({ db, embeddings: before, vectors: await chooseVectorSearch(db) }, { owner }, ASK)).embedding?.[0]?.id,
      ids[VOICE],
    );

    // The endpoint now serves another model of the same width: nothing of the old one is compared with its queries
    // (compared, the reversed axes would put the coffee memory first for a question about style).
    const mixed = await rankMemories({ db, embeddings: after, vectors: await chooseVectorSearch(db) }, { owner }, ASK);
    assert.equal(mixed.embedding, undefined, JSON.stringify(mixed.embedding));
    const chunks = await matchSkillChunks(db, owner, 'roast', after.model);
    assert.ok(chunks.length > 0 && chunks.every((c) => c.embedding === null), 'no chunk vector of the old model is offered');

    const logger = createLogger({ level: 'error' });
    const redone = await reembedStoredVectors({ db, embeddings: after, logger }, new AbortController().signal);
    assert.equal(redone, 2 + chunks.length, 'every memory and every chunk of the old model');
    const memories = await db.selectFrom('memories').select(['content', 'embedding', 'embedding_model']).execute();
    for (const m of memories) {
      assert.equal(m.embedding_model, 'endpoint:concepts-reversed');
      assert.deepEqual(m.embedding, MODELS['concepts-reversed']!(m.content));
    }
    const stored = await db.selectFrom('skill_chunks').select('embedding_model').execute();
    assert.ok(stored.every((c) => c.embedding_model === 'endpoint:concepts-reversed'));
    assert.equal(
      (await rankMemories({ db, embeddings: after, vectors: await chooseVectorSearch(db) }, { owner }, ASK)).embedding?.[0]?.id,
      ids[VOICE],
    );
    assert.ok((await matchSkillChunks(db, owner, 'roast', after.model)).every((c) => c.embedding !== null));
    assert.equal(await reembedStoredVectors({ db, embeddings: after, logger }, new AbortController().signal), 0, 'nothing left to redo');
  });
});
