import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { createTranscriptCache } from '../../activities/transcript-cache.ts';
import { readTurn } from '../../activities/turn-inputs.ts';
import { toolResultForModel } from '../../embeds/model-form.ts';

/** A block as Postgres holds it: the Anthropic adapter's prompt-cache marker is the wire's, not the transcript's. */
const unmarked = (content: unknown) =>
  (content as Array<Record<string, unknown>>).map(({ cache_control: _, ...block }) => block as Record<string, unknown>);

describe('the per-worker transcript cache', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'rememberer', tools: ['lab.lookup'], maxTurns: 5 }));
  });
  after(() => stack.stop());

  /** A finished mission of two tool turns and an answer; the model's requests and the transcript Postgres holds. */
  async function twoTurns() {
    stack.tools.on('lookup', (input) => ({ body: { found: `about ${String((input as { q: string }).q)}`, rank: 1 } }));
    stack.model.enqueue(
      {
        reply: {
          text: 'Looking.',
          toolUses: [{ id: 'tu_one', name: 'lab__lookup', input: { q: 'one', scope: { zone: 'b', at: 1 }, v: 2 } }],
        },
      },
      { reply: { toolUses: [{ id: 'tu_two', name: 'lab__lookup', input: { q: 'two' } }] } },
      { reply: { text: 'Both found.' } },
    );
    const first = stack.model.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'rememberer', objective: 'Look up one, then two.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const rows = await stack.db
      .selectFrom('mission_messages')
      .select(['seq', 'role', 'content'])
      .where('mission_id', '=', id)
      .orderBy('seq')
      .execute();
    return { id, requests: stack.model.requests.slice(first), rows };
  }

  it('sends each call the conversation Postgres holds, though the worker no longer reads it back', async () => {
    const { id, requests, rows } = await twoTurns();
    assert.equal(requests.length, 3);
    assert.equal(rows.length, 6, 'objective, 3 replies, 2 tool-result messages');
    // Call t is sent positions 0..2(t-1): what was stored before it, then its own opening message.
    for (const [i, req] of requests.entries()) {
      const sent = (req.messages as Array<{ role: string; content: unknown }>).map((m) => ({ role: m.role, content: unmarked(m.content) }));
      const held = rows.slice(0, 2 * i + 1).map((r) => ({ role: r.role, content: r.content }));
      assert.deepEqual(sent, held, `call ${i + 1}`);
      // Byte for byte where order can differ: a tool's input as Postgres returns it (jsonb's key order), so a call
      // served from memory and one that read Postgres send the same prompt prefix.
      const inputs = (blocks: Array<{ content: Array<Record<string, unknown>> }>) =>
        blocks.flatMap((m) => m.content.filter((b) => b.type === 'tool_use').map((b) => JSON.stringify(b.input)));
      assert.deepEqual(inputs(sent), inputs(held as never), `call ${i + 1}: tool inputs`);
    }
    assert.match(requests[2]!.toolResults[0]!.content, /about two/);
    // A tool result rendered from memory reads as one rendered from the output Postgres holds (jsonb's key order: the
    // tool answered `found` before `rank`).
    const stored = await stack.db.selectFrom('tool_calls').select(['tool_use_id', 'output']).where('mission_id', '=', id).execute();
    for (const [i, toolUseId] of [
      [1, 'tu_one'],
      [2, 'tu_two'],
    ] as const)
      assert.equal(
        requests[i]!.toolResults[0]!.content,
        toolResultForModel(stored.find((r) => r.tool_use_id === toolUseId)!.output).text,
        `call ${i + 1}: the tool result`,
      );
  });

  it('answers from memory only under the stamp the workflow passed: another write’s stamp reads Postgres', async () => {
    const { id, rows } = await twoTurns();
    // This worker stored turn 1 (reply and tool output) under stamps `a` and `x`; the workflow acted on another
    // attempt's (a retry on another worker, a call asked again after an interrupt), which rewrote both.
    const worker = createTranscriptCache();
    const stale = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'a reply nobody acted on' }] };
    worker.keepConversation(id, 'a', { messages: [rows[0]! as never, stale], nextSeq: 2 });
    worker.keepOutput(id, 1, { toolUseId: 'tu_one', status: 'completed', json: '{"found":"stale"}' }, 'x');
    const turn2 = (transcript: string, stamp: string) =>
      readTurn(
        stack.db,
        worker,
        { missionId: id, turn: 2, transcript, previous: [{ toolUseId: 'tu_one', status: 'completed', stamp }] },
        2,
      );

    const remembered = await turn2('a', 'x');
    assert.deepEqual(remembered.conversation.messages[1], stale, 'its own stamps: what it stored');
    assert.deepEqual(remembered.outputs[0]!.output, { found: 'stale' });

    for (const [transcript, stamp] of [
      ['b', 'x'],
      ['a', 'y'],
    ] as const) {
      const read = await turn2(transcript, stamp);
      assert.deepEqual(
        read.conversation.messages.map((m) => m.content),
        rows.slice(0, 2).map((r) => r.content),
        `stamps ${transcript}/${stamp}: the stored reply`,
      );
      assert.deepEqual(read.outputs[0]!.output, { found: 'about one', rank: 1 }, `stamps ${transcript}/${stamp}: the stored output`);
    }
  });
});
