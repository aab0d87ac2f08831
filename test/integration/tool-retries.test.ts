import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('a tool’s own retries (app.yml `retries`), spent inside the tool activity', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'retrier', tools: ['lab.lookup', 'lab.report'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  const feedEnds = (id: string) =>
    stack.db
      .selectFrom('feed')
      .select(['tool_use_id', 'outcome', 'error'])
      .where('mission_id', '=', id)
      .where('kind', '=', 'tool_end')
      .execute();

  it('retries a broken connection up to the tool’s retries, then the model sees the answer', async () => {
    let tries = 0;
    stack.tools.on('lookup', () => (++tries <= 2 ? { drop: true } : { body: { hit: 'third time' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_r', name: 'lab__lookup', input: { q: 'x' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'retrier', objective: 'Retry.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(tries, 3, 'lab.lookup has retries: 2, so three tries');
    assert.match(stack.model.requests.at(-1)!.toolResults[0]!.content, /third time/);
    assert.deepEqual(await feedEnds(id), [{ tool_use_id: 'tu_r', outcome: 'completed', error: null }]);
  });

  it('a tool without retries that cannot be reached is an error result the model sees, tried once', async () => {
    let tries = 0;
    stack.tools.on('report', () => (++tries, { drop: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_d', name: 'lab__report', input: { size: 1 } }] } }, { reply: { text: 'coped' } });
    const { id } = await stack.api.startMission(key, { skill: 'retrier', objective: 'Fail once.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(tries, 1);
    assert.deepEqual(
      mission.tools.map((t: { status: string }) => t.status),
      ['error'],
    );
    const result = stack.model.requests.at(-1)!.toolResults[0]!;
    assert.ok(result.isError);
    assert.match(result.content, /lab\.report: request failed/);
    const ends = await feedEnds(id);
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.outcome, 'error');
    assert.match(ends[0]!.error!, /request failed/);
  });
});
