import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

for (const provider of ['anthropic', 'openai'] as const) {
  describe(`a mission end to end (${provider} protocol)`, () => {
    let stack: TestStack;
    let key: string;
    before(async () => {
      stack = await startTestStack({ provider });
      key = await stack.api.newKey();
      await stack.api.createSkill(key, skillMd({ name: 'researcher', tools: ['lab.lookup', 'lab.scan'], maxTurns: 5 }));
    });
    after(() => stack.stop());

    it('runs two tools of one turn in parallel, feeds both results back in order, and completes', async () => {
      // The first tool asked for finishes last, so the order of the results is the model's, not the finishing order.
      stack.tools.on('lookup', () => ({ delayMs: 900, body: { answer: 'forty-two' } }));
      stack.tools.on('scan', () => ({ delayMs: 300, body: { findings: ['a', 'b'] } }));
      stack.model.enqueue(
        {
          reply: {
            text: 'Looking things up.',
            toolUses: [
              { id: 'tu_a', name: 'lab__lookup', input: { q: 'meaning' } },
              { id: 'tu_b', name: 'lab__scan', input: { target: 'x' } },
            ],
          },
        },
        { reply: { text: 'The answer is forty-two.', usage: { inputTokens: 30, outputTokens: 7 } } },
      );
      const { id } = await stack.api.startMission(key, { skill: 'researcher', objective: 'Find the meaning.' });
      const mission = await stack.api.waitForEnd(key, id);

      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'The answer is forty-two.');
      assert.deepEqual(mission.result.metrics.turns, 2);
      assert.equal(mission.result.metrics.toolCalls, 2);
      assert.deepEqual(
        mission.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]),
        [
          ['tu_a', 'completed'],
          ['tu_b', 'completed'],
        ],
      );

      const [lookup, scan] = ['lookup', 'scan'].map((t) => stack.tools.requests.find((r) => r.tool === t)!);
      assert.ok(lookup && scan, 'both tools were called');
      assert.ok(lookup.startedAt < scan.endedAt! && scan.startedAt < lookup.endedAt!, 'the two tool calls overlapped in time');
      assert.ok(scan.endedAt! < lookup.endedAt!, 'the second tool finished first');

      const second = stack.model.requests[1]!;
      assert.deepEqual(
        second.toolResults.map((r) => r.toolUseId),
        ['tu_a', 'tu_b'],
        'results in the order the model asked, whichever tool finished first',
      );
      assert.match(second.toolResults[0]!.content, /forty-two/);
      assert.match(second.toolResults[1]!.content, /findings/);
      assert.deepEqual(stack.model.requests[0]!.toolNames.sort(), [
        'create_script',
        'create_skill',
        'lab__lookup',
        'lab__scan',
        'read_skill_asset',
        'run_skill_script',
        'save_memory',
        'search_memory',
        'update_skill',
        'use_skill',
      ]);
      assert.match(stack.model.requests[0]!.lastUserText, /Find the meaning/);
    });

    it('streams the mission as ordered SSE events ending with the terminal status', async () => {
      stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_c', name: 'lab__lookup', input: { q: 'x' } }] } }, { reply: { text: 'done' } });
      const { id } = await stack.api.startMission(key, { skill: 'researcher', objective: 'Stream me.' });
      const stream = await stack.api.readEvents(key, id);
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
      const events = eventsOf(stream.frames);
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
        'seq is dense and ordered',
      );
      assert.deepEqual(
        events.map((e) => e.type),
        ['status', 'turn', 'tool_start', 'embed', 'tool_end', 'embed', 'turn', 'status'],
      );
      assert.deepEqual(
        stream.frames.filter((f) => f.id).map((f) => Number(f.id)),
        events.map((e) => e.seq),
        'SSE id is the seq',
      );
      const last = events.at(-1)!;
      assert.equal(last.type === 'status' && last.status, 'completed');
    });
  });
}
