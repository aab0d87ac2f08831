import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const systemOf = (r: RecordedRequest) => r.system;
const FACT = 'The team always reports distances in kilometres, never miles.';

// Both local encoders: with the word vectors "units" lies nowhere near "kilometres" (no retriever matches the fact at
// all); with the sentence encoder it clears the cosine floor by little. Either way the fact belongs in the context.
for (const encoder of ['word-vectors', 'sentence-encoder'] as const)
  describe(`a mission's user context keeps the user's own saved facts beside the service's completion memories (${encoder})`, () => {
    let stack: TestStack;
    let key: string;
    before(async () => {
      stack = await startTestStack(encoder === 'word-vectors' ? { env: { SENTENCE_ENCODER_DIR: '/nonexistent/sentence-encoder' } } : {});
      assert.equal(stack.config.localEncoder, encoder);
      key = await stack.api.newKey();
      await stack.api.createSkill(key, skillMd({ name: 'writer', maxTurns: 2 }));
    });
    after(() => stack.stop());

    const run = async (objective: string, reply: string) => {
      const first = stack.model.requests.length;
      stack.model.enqueue({ reply: { text: reply } });
      const { id } = await stack.api.startMission(key, { skill: 'writer', objective, workspaceCode: 'ws-units' });
      assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
      return { id, system: systemOf(stack.model.requests[first]!) };
    };

    it('shows the saved fact about units to a mission asking which units to use, apart from the earlier result', async () => {
      const put = await stack.api.request('PUT', '/api/v1/profile', {
        key,
        body: { company: 'Fernhill Coffee Roasters', role: 'Head of Logistics', brandVoice: 'plain' },
      });
      assert.equal(put.status, 200);
      assert.equal((await stack.api.request('POST', '/api/v1/memories', { key, body: { content: FACT } })).status, 201);
      // The earlier mission: its completion memory repeats its objective, which shares the new ask's words.
      await run('Which units should we use?', 'Which units should we use? That depends on what the team reports.');

      const { id, system } = await run('Which units should we use?', 'Kilometres, as the team always reports.');
      const context = system.slice(system.indexOf('# USER CONTEXT'), system.indexOf('You are carrying out'));
      assert.ok(context.includes(`### Saved facts\n\n- ${FACT}`), context);
      assert.ok(context.includes('### Results of earlier missions\n\n- Result of skill writer'), context);
      assert.ok(context.includes('2 of 2 memories shown (saved 1, missions 1).'), context);
      const mission = (await stack.api.request('GET', `/api/v1/missions/${id}`, { key })).body;
      const memories = (await stack.api.request('GET', '/api/v1/memories', { key })).body.items as Array<{ id: string; content: string }>;
      assert.deepEqual(mission.contextMemories.shown.saved, [memories.find((m) => m.content === FACT)!.id]);
      assert.equal(mission.contextMemories.shown.missions.length, 1);
      assert.deepEqual(mission.contextMemories.leftOut, { belowRelevance: 0, overBudget: 0, duplicates: 0 });
    });

    it('gives completion memories at most their share and says how many it left out', async () => {
      // Two more answers to the same ask (three in all, each echoing it), and one mission about something else.
      await run('Which units should we use?', 'Miles are never used here.');
      await run('Draft the newsletter for December.', 'Newsletter drafted with the roast of the month.');
      const { id, system } = await run('Which units should we use?', 'Kilometres.');
      const context = system.slice(system.indexOf('# USER CONTEXT'), system.indexOf('You are carrying out'));
      assert.ok(context.includes(`- ${FACT}`), context);
      const account = (await stack.api.request('GET', `/api/v1/missions/${id}`, { key })).body.contextMemories;
      assert.equal(account.total, 5, 'the fact and four completion memories');
      assert.equal(account.shown.saved.length, 1);
      assert.equal(account.shown.missions.length, 2, 'completion memories take at most two of the five places');
      const { belowRelevance, overBudget, duplicates } = account.leftOut;
      assert.equal(belowRelevance + overBudget + duplicates, 2, JSON.stringify(account));
      assert.ok(overBudget >= 1, `a third completion memory on the same ask did not fit the share: ${JSON.stringify(account)}`);
      assert.match(context, /3 of 5 memories shown \(saved 1, missions 2\); left out: .*over the budget/);
    });
  });
