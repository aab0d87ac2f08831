import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { userMessageOfTurn } from '../../activities/transcript-messages.ts';
import type { ChatMessage } from '../../model/model-types.ts';

describe("a turn's opening user message", () => {
  const objective: ChatMessage = { role: 'user', content: [{ type: 'text', text: 'Objective: plan.' }] };

  it('puts the messages a person sent after the tool results, in order', () => {
    const results: ChatMessage = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'ok' }] };
    assert.deepEqual(userMessageOfTurn(undefined, results, ['first', 'second']).content, [
      { type: 'tool_result', tool_use_id: 'tu_1', content: 'ok' },
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ]);
  });

  it('turn 1: joins the objective, and writing it again from what was stored never repeats a text', () => {
    const once = userMessageOfTurn(objective, undefined, ['A']);
    // An interrupt asks turn 1 again with one more message: built from the stored message, which already holds A.
    const again = userMessageOfTurn(once, undefined, ['A', 'B']);
    assert.deepEqual(
      again.content.map((b) => (b.type === 'text' ? b.text : b.type)),
      ['Objective: plan.', 'A', 'B'],
    );
  });
});
