import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadRetrievalSet } from '../../testkit/memory-eval.ts';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { insertMemory } from '../../db/memories.ts';
import { createLogger } from '../../lib/logger.ts';
import { until } from '../../testkit/until.ts';
import { buildEmbeddings, wordVectorCache } from '../../memory/build-embeddings.ts';
import type { EmbeddingsClient } from '../../memory/embeddings-client.ts';
import { createLocalEmbeddings } from '../../memory/local-embeddings.ts';
import { reembedStoredVectors } from '../../memory/reembed.ts';
import { retrieveMemories } from '../../memory/retrieve.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const systemOf = (r: RecordedRequest) => r.system;

/** An ask, the memory that answers it by meaning, and look-alikes that share the ask's words but not its meaning. */
type Case = { workspace: string; ask: string; answer: string; lookAlikes: string[] };

// The 66 memories of the bench's retrieval set, and a paraphrase that shares no content word with its answer.
const FIXTURE = loadRetrievalSet().memories.map((m) => m.content);
const HEDGE: Case = {
  workspace: 'fixture',
  ask: 'How do we protect ourselves against exchange-rate swings?',
  answer: 'The currency hedge policy: buy dollars three months ahead for green coffee contracts.',
  lookAlikes: FIXTURE.filter((m) => !m.startsWith('The currency hedge policy')),
};
// The example, with seven look-alikes sharing "report" and "use". Word vectors put "units" nowhere near
// "kilometres" (cosine -0.005) and missed it; the sentence encoder finds it.
const UNITS: Case = {
  workspace: 'units',
  ask: 'Which units should the report use?',
  answer: 'We report distances in kilometres.',
  lookAlikes: [
    'Use the shared drive for every report draft.',
    'The board report is due on the first Monday of the quarter.',
    'Use plain language in every report, no jargon.',
    'Report bugs in Linear, not by email.',
    'The finance report uses last year as its baseline.',
    'Reports use the brand template with the teal header.',
    'Use the weekly report to list open hiring requests.',
  ],
};

describe('memory retrieval by meaning with no embeddings endpoint configured (the local sentence encoder)', () => {
  let stack: TestStack;
  let key: string;
  let embeddings: EmbeddingsClient;
  before(async () => {
    stack = await startTestStack();
    assert.equal(stack.config.embeddings, undefined, 'no EMBEDDINGS_BASE_URL in this stack');
    const built = buildEmbeddings(stack.config);
    assert.equal(built.kind, 'sentence-encoder', `the setup installs the sentence encoder into ${stack.config.sentenceEncoderDir}`);
    embeddings = built.embeddings;
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'writer', maxTurns: 2 }));
    for (const c of [HEDGE, UNITS])
      for (const content of [c.answer, ...c.lookAlikes]) {
        const res = await stack.api.request('POST', '/api/v1/memories', { key, body: { content, workspaceCode: c.workspace } });
        assert.equal(res.status, 201);
      }
  });
  after(() => stack.stop());

  /** The memories a mission on `c.ask` sees in its context, after checking that keyword and trigram alone miss. */
  async function missionMemories(c: Case): Promise<string> {
    const answer = await stack.db.selectFrom('memories').selectAll().where('content', '=', c.answer).executeTakeFirstOrThrow();
    const scope = { owner: { tenantId: answer.tenant_id, userId: answer.user_id }, workspaceCode: c.workspace };
    // The control: keyword and trigram alone (retrieval before the local encoder) leave the answer out of the five.
    const lexical = await retrieveMemories({ db: stack.db, vectors: stack.vectors }, scope, c.ask, 5);
    assert.ok(!lexical.some((m) => m.content === c.answer), lexical.map((m) => m.content).join(' | '));
    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'Noted.' } });
    const { id } = await stack.api.startMission(key, { skill: 'writer', objective: c.ask, workspaceCode: c.workspace });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const system = systemOf(stack.model.requests[first]!);
    return system.slice(system.indexOf('## Memories'), system.indexOf('You are carrying out'));
  }

  it('puts a memory sharing no word with the objective into the mission context', async () => {
    assert.ok(FIXTURE.includes(HEDGE.answer));
    const memories = await missionMemories(HEDGE);
    assert.ok(memories.includes(`- ${HEDGE.answer}`), memories);
  });

  it('finds "we report distances in kilometres" for "Which units should the report use?"', async () => {
    const memories = await missionMemories(UNITS);
    assert.ok(memories.includes(`- ${UNITS.answer}`), memories);
  });

  it("stores each memory with a vector of the sentence encoder (a mission's one once its result is out)", async () => {
    const vectored = async () => {
      const rows = await stack.db.selectFrom('memories').select(['embedding', 'source']).execute();
      return (
        rows.length > 0 &&
        rows.some((r) => r.source === 'mission') &&
        rows.every((r) => Array.isArray(r.embedding) && r.embedding.length === 384)
      );
    };
    await until(vectored, { timeoutMs: 30_000, what: 'every memory with a 384-dimension vector' });
  });

  it('re-embeds memories stored without a vector or by the word vectors, and retrieval then finds them', async () => {
    // The answer as a process with the word vectors stored it (a new row: this process never saw its vector).
    const answer = await stack.db.selectFrom('memories').selectAll().where('content', '=', UNITS.answer).executeTakeFirstOrThrow();
    const words = createLocalEmbeddings({ cacheFile: wordVectorCache('.data') });
    const [old] = await words.embed([UNITS.answer]);
    await stack.db.deleteFrom('memories').where('id', '=', answer.id).execute();
    const owner = { tenantId: answer.tenant_id, userId: answer.user_id };
    await insertMemory(stack.db, {
      owner,
      workspaceCode: UNITS.workspace,
      content: UNITS.answer,
      source: 'user',
      embedding: { model: words.model, vector: old! },
    });
    await stack.db.updateTable('memories').set({ embedding: null }).where('content', '=', HEDGE.answer).execute();
    const scope = { owner, workspaceCode: UNITS.workspace };
    const before = await retrieveMemories({ db: stack.db, embeddings, vectors: stack.vectors }, scope, UNITS.ask, 5);
    assert.ok(
      !before.some((m) => m.content === UNITS.answer),
      'a vector of the word vectors is not compared with a query of the sentence encoder',
    );

    const done = await reembedStoredVectors(
      { db: stack.db, embeddings, logger: createLogger({ level: 'error' }) },
      new AbortController().signal,
    );
    assert.equal(done, 2);
    const after = await retrieveMemories({ db: stack.db, embeddings, vectors: stack.vectors }, scope, UNITS.ask, 5);
    assert.ok(after.some((m) => m.content === UNITS.answer));
    const rows = await stack.db.selectFrom('memories').select(['embedding']).execute();
    assert.ok(rows.every((r) => r.embedding?.length === 384));
    assert.equal(
      await reembedStoredVectors({ db: stack.db, embeddings, logger: createLogger({ level: 'error' }) }, new AbortController().signal),
      0,
    );
  });
});
