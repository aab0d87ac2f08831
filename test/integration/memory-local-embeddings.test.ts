import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { retrieveMemories } from '../../memory/retrieve.ts';
import { skillMd, startTestStack, type TestStack } from '../helpers/test-stack.ts';

const systemOf = (r: RecordedRequest) => String((r.body as { system?: unknown }).system ?? '');

// Memories that share the ask's words ("report", "use") but not its meaning, and the one that answers it with none.
const ANSWER = 'We report distances in kilometres.';
const LOOK_ALIKES = [
  'Use the shared drive for every report draft.',
  'The board report is due on the first Monday of the quarter.',
  'Use plain language in every report, no jargon.',
  'Report bugs in Linear, not by email.',
  'The finance report uses last year as its baseline.',
  'Reports use the brand template with the teal header.',
  'Use the weekly report to list open hiring requests.',
];
const ASK = 'Which units should the report use?';

describe('memory retrieval by meaning with no embeddings endpoint configured (the local encoder)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    assert.equal(stack.config.embeddings, undefined, 'no EMBEDDINGS_BASE_URL in this stack');
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'writer', maxTurns: 2 }));
    for (const content of [ANSWER, ...LOOK_ALIKES]) {
      assert.equal((await stack.api.request('POST', '/api/v1/memories', { key, body: { content, workspaceCode: 'ws' } })).status, 201);
    }
  });
  after(() => stack.stop());

  it('finds "we report distances in kilometres" for "Which units should the report use?" in the mission context', async () => {
    // The control: keyword and trigram alone (what retrieval did before) leave the answer out of the five kept.
    const answer = await stack.db.selectFrom('memories').selectAll().where('content', '=', ANSWER).executeTakeFirstOrThrow();
    const scope = { owner: { tenantId: answer.tenant_id, userId: answer.user_id }, workspaceCode: 'ws' };
    const lexical = await retrieveMemories({ db: stack.db }, scope, ASK, 5);
    assert.ok(!lexical.some((m) => m.content === ANSWER), lexical.map((m) => m.content).join(' | '));

    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'Kilometres it is.' } });
    const { id } = await stack.api.startMission(key, { skill: 'writer', objective: ASK, workspaceCode: 'ws' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const system = systemOf(stack.model.requests[first]!);
    const memories = system.slice(system.indexOf('## Relevant memories'));
    assert.ok(memories.includes(`- ${ANSWER}`), memories);
  });

  it('stores each memory with a local vector and answers GET /memories?q= by meaning too', async () => {
    const rows = await stack.db.selectFrom('memories').select(['content', 'embedding']).execute();
    assert.ok(rows.every((r) => Array.isArray(r.embedding) && r.embedding.length === 100));
    const res = await stack.api.request('GET', `/api/v1/memories?q=${encodeURIComponent('How far in metric?')}&limit=3`, { key });
    assert.equal(res.status, 200);
    const items = (res.body as { items: Array<{ content: string }> }).items.map((i) => i.content);
    assert.equal(items[0], ANSWER, items.join(' | '));
  });
});
