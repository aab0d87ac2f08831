import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const TURNS = 6;

describe('workflow history stays small', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'reporter', tools: ['lab.report'], maxTurns: 10 }));
    stack.tools.on('report', (input) => ({ body: { report: 'x'.repeat(Number(input.size)) } }));
  });
  after(() => stack.stop());

  async function historyBytes(resultSize: number): Promise<{ bytes: number; events: number }> {
    stack.model.setHandler((req) =>
      req.allToolResults.length < TURNS
        ? { reply: { text: 'more', toolUses: [{ name: 'lab__report', input: { size: resultSize } }] } }
        : { reply: { text: `read ${req.allToolResults.length} reports` } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'reporter', objective: `reports of ${resultSize} bytes` });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.metrics.toolCalls, TURNS);
    const d = await stack.handle(id).describe();
    return { bytes: d.historySize!, events: d.historyLength };
  }

  it('does not grow with the size of tool results or of the conversation', async () => {
    const small = await historyBytes(100);
    const large = await historyBytes(200_000); // 1.2 MB of tool output in the conversation
    assert.equal(large.events, small.events);
    // Only the size numbers in the tool inputs differ; 1.2 MB of results add nothing to history.
    assert.ok(Math.abs(large.bytes - small.bytes) < 200, `history ${small.bytes} B vs ${large.bytes} B`);
    assert.ok(large.bytes < 64 * 1024, `a ${TURNS}-turn mission's history is ${large.bytes} B`);
    const rows = await stack.db
      .selectFrom('tool_calls')
      .select((eb) => eb.fn.sum<string>(eb.fn('length', [eb.cast('output', 'text')])).as('bytes'))
      .executeTakeFirstOrThrow();
    assert.ok(Number(rows.bytes) > TURNS * 200_000, 'the outputs are in Postgres');
  });
});
