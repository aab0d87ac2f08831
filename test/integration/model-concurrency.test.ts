import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('model concurrency slots', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { MODEL_CONCURRENCY: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'busy', maxTurns: 2 }));
  });
  after(() => stack.stop());

  it('with MODEL_CONCURRENCY=2 and six missions, never has more than two model requests in flight', async () => {
    stack.model.setHandler(() => ({ delayMs: 600, reply: { text: 'slow answer' } }));
    const ids = await Promise.all(
      Array.from({ length: 6 }, (_, i) => stack.api.startMission(key, { skill: 'busy', objective: `mission ${i}` })),
    );
    const missions = await Promise.all(ids.map(({ id }) => stack.api.waitForEnd(key, id)));
    assert.deepEqual(
      missions.map((m) => m.status),
      Array(6).fill('completed'),
    );
    assert.equal(stack.model.requests.length, 6);
    assert.equal(stack.model.maxInFlight, 2, 'the cap was reached and never exceeded');
  });
});
