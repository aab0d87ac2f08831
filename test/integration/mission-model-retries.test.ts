import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('model call retries', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'plain', maxTurns: 3 }));
  });
  after(() => stack.stop());

  const run = async (objective: string) => {
    const before = stack.model.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'plain', objective });
    const mission = await stack.api.waitForEnd(key, id);
    return { id, mission, requests: stack.model.requests.slice(before) };
  };

  it('honours Retry-After on a 429 and then succeeds', async () => {
    stack.model.enqueue({ status: 429, headers: { 'retry-after': '1' } }, { reply: { text: 'after the wait' } });
    const { mission, requests } = await run('rate limited once');
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'after the wait');
    assert.equal(requests.length, 2);
    const gap = requests[1]!.receivedAt - requests[0]!.receivedAt;
    assert.ok(gap >= 900, `the retry waited for Retry-After (gap ${gap} ms)`);
  });

  it('fails with a clear error after three 429s (two retries)', async () => {
    stack.model.enqueue(...Array.from({ length: 3 }, () => ({ status: 429, headers: { 'retry-after': '1' } })));
    const { id, mission, requests } = await run('rate limited for good');
    assert.equal(mission.status, 'failed');
    assert.equal(requests.length, 3, 'one call and two retries');
    assert.equal(mission.error.phase, 'model');
    assert.match(mission.error.message, /429|rate/i);
    const description = await stack.handle(id).describe();
    assert.equal(description.status.name, 'FAILED');
  });

  it('retries a 500 and completes', async () => {
    stack.model.enqueue({ status: 500 }, { reply: { text: 'recovered' } });
    const { mission, requests } = await run('server error once');
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'recovered');
    assert.equal(requests.length, 2);
  });

  it('fails at once on a 400, with one request only', async () => {
    stack.model.enqueue({ status: 400, message: 'messages: bad block' });
    const { mission, requests } = await run('bad request');
    assert.equal(mission.status, 'failed');
    assert.equal(requests.length, 1, 'a 400 is not retried');
    assert.match(mission.error.message, /400/);
    assert.match(mission.error.message, /bad block/);
  });

  it('treats a malformed reply as transient and retries it', async () => {
    stack.model.enqueue({ malformed: true }, { reply: { text: 'well-formed now' } });
    const { mission, requests } = await run('malformed once');
    assert.equal(mission.status, 'completed');
    assert.equal(requests.length, 2);
  });
});
