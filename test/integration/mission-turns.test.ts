import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('the turn loop', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'looper', tools: ['lab.lookup', 'lab.report'], maxTurns: 10 }));
  });
  after(() => stack.stop());

  const run = async (body: Record<string, unknown>) => {
    const first = stack.model.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'looper', ...body });
    const mission = await stack.api.waitForEnd(key, id);
    return { id, mission, requests: stack.model.requests.slice(first) };
  };

  it('when the turn budget is spent, makes one final call with no tools and returns its text', async () => {
    stack.model.setHandler((req) =>
      req.toolNames.length === 0
        ? { reply: { text: 'Final answer from what I have.' } }
        : { reply: { toolUses: [{ name: 'lab__lookup', input: { q: `again ${req.messages.length}` } }] } },
    );
    try {
      const { mission, requests } = await run({ objective: 'Loop forever.', maxTurns: 2 });
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'Final answer from what I have.');
      assert.equal(mission.result.stoppedBy, 'turn_budget');
      assert.equal(requests.length, 3, 'two turns and the final call');
      assert.deepEqual(requests[2]!.toolNames, [], 'the final call offers no tools');
      assert.equal((requests[2]!.body as { tools?: unknown }).tools, undefined);
      assert.match(requests[2]!.lastUserText, /final answer now/i);
      assert.equal(mission.result.metrics.toolCalls, 2);
    } finally {
      stack.model.setHandler(undefined);
    }
  });

  it('returns a tool HTTP 500 to the model as an error result and goes on', async () => {
    stack.tools.on('lookup', () => ({ status: 500, body: { error: 'database on fire' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_500', name: 'lab__lookup', input: { q: 'x' } }] } },
      { reply: { text: 'The tool failed; sorry.' } },
    );
    const { mission, requests } = await run({ objective: 'Use a broken tool.' });
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'error');
    const result = requests[1]!.toolResults[0]!;
    assert.equal(result.isError, true);
    assert.match(result.content, /HTTP 500/);
    assert.match(result.content, /database on fire/);
  });

  it('refuses tool input that fails the schema and a tool the model made up, without calling out', async () => {
    const calls = stack.tools.requests.length;
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_bad', name: 'lab__report', input: { size: 'huge' } },
            { id: 'tu_ghost', name: 'lab__ghost', input: {} },
          ],
        },
      },
      { reply: { text: 'ok' } },
    );
    const { mission, requests } = await run({ objective: 'Send bad input.' });
    assert.equal(mission.status, 'completed');
    assert.equal(stack.tools.requests.length, calls, 'no tool server request');
    const [bad, ghost] = requests[1]!.toolResults;
    assert.ok(bad!.isError && /schema/.test(bad!.content), bad!.content);
    assert.ok(ghost!.isError && /unknown tool/.test(ghost!.content), ghost!.content);
  });

  it('ends on max_tokens with the text so far and says so', async () => {
    stack.model.enqueue({ reply: { text: 'A long answer that was cut', stopReason: 'max_tokens' } });
    const { mission } = await run({ objective: 'Talk a lot.' });
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.stoppedBy, 'max_tokens');
    assert.equal(mission.result.text, 'A long answer that was cut');
  });

  it('sends the transcript in order across turns and records token usage', async () => {
    stack.model.enqueue(
      {
        reply: {
          text: 'step one',
          toolUses: [{ id: 'tu_1', name: 'lab__lookup', input: { q: 'one' } }],
          usage: { inputTokens: 10, outputTokens: 2 },
        },
      },
      {
        reply: {
          text: 'step two',
          toolUses: [{ id: 'tu_2', name: 'lab__lookup', input: { q: 'two' } }],
          usage: { inputTokens: 20, outputTokens: 3 },
        },
      },
      { reply: { text: 'all done', usage: { inputTokens: 30, outputTokens: 4 } } },
    );
    const { id, mission, requests } = await run({ objective: 'Three turns.' });
    assert.equal(mission.result.metrics.inputTokens, 60);
    assert.equal(mission.result.metrics.outputTokens, 9);
    assert.equal(requests[2]!.messages.length, 5, 'objective, reply, results, reply, results');
    assert.deepEqual(
      requests[2]!.allToolResults.map((r) => r.toolUseId),
      ['tu_1', 'tu_2'],
    );
    const rows = await stack.db
      .selectFrom('mission_messages')
      .select(['seq', 'role'])
      .where('mission_id', '=', id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
    );
    const usage = await stack.db.selectFrom('model_calls').select(['input_tokens']).where('mission_id', '=', id).execute();
    assert.equal(usage.length, 3);
  });
});
