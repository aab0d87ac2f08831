import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

describe('a tool cancel when no worker can answer', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({ worker: false });
  });
  after(() => stack.stop());

  it('answers 503 within its deadline instead of hanging, and the call stays as it was', async () => {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'orphan', tools: ['lab.scan'], maxTurns: 2 }));
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_o', name: 'lab__scan', input: { target: 'o' } }] } });
    const worker = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'orphan', objective: 'Lose the worker.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.target === 'o'));
    await worker.kill('SIGKILL');

    const sent = Date.now();
    const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_o/cancel`, { key });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'unavailable');
    assert.ok(Date.now() - sent < 20_000, 'bounded by the update deadline');
    assert.equal((await stack.handle(id).describe()).status.name, 'RUNNING');
    await stack.handle(id).terminate('test over');
  });
});
