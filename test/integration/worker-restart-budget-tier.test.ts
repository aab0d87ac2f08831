import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

describe('a mission across a worker restart', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'thrifty', tools: ['lab.scan', 'lab.lookup'], maxTurns: 5 }));
    await stack.api.createSkill(key, skillMd({ name: 'remapped', tools: ['lab.scan'], maxTurns: 5, model: 'forte' }));
  });
  // A failed assertion must not leave a worker process behind (the runner would wait for it).
  const workers = spawnedWorkers();
  const spawn = (env: Record<string, string>) => workers.spawn(env);
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  it('counts the tokens spent before the crash: the restarted worker stops on the budget', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'after restart' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_s', name: 'lab__scan', input: { target: 't' } }], usage: { inputTokens: 100, outputTokens: 10 } } },
      { reply: { toolUses: [{ id: 'tu_l', name: 'lab__lookup', input: { q: 'more' } }], usage: { inputTokens: 100, outputTokens: 10 } } },
      { reply: { text: 'stopped by the budget', usage: { inputTokens: 50, outputTokens: 5 } } },
    );
    const first = await spawn(stack.env);
    // 110 tokens before the crash; 220 after turn 2, and the next turn (≈110) would pass 300. Had the restart
    // forgotten turn 1, 110 + 110 = 220 would fit and the lookup would run.
    const { id } = await stack.api.startMission(key, { skill: 'thrifty', objective: 'Spend carefully.', maxTokens: 300 });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawn(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.stoppedBy, 'budget');
      assert.equal(stack.tools.requests.filter((r) => r.tool === 'lookup').length, 0, 'the second tool turn did not run');
      assert.equal(mission.result.metrics.inputTokens + mission.result.metrics.outputTokens, 275);
    } finally {
      await second.kill('SIGTERM');
    }
  });

  it('resolves the tier at each model call: a restarted worker with a new model map moves the mission to the new id', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'yes' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_m', name: 'lab__scan', input: { target: 't' } }] } },
      { reply: { text: 'answered by the new model' } },
    );
    const first = stack.model.requests.length;
    const scansBefore = stack.tools.requests.filter((r) => r.tool === 'scan').length;
    const old = await spawn({ ...stack.env, MODEL_TIER_FORTE: 'forte-v1' });
    const { id } = await stack.api.startMission(key, { skill: 'remapped', objective: 'Switch models mid-mission.' });
    await stack.tools.waitFor(() => stack.tools.requests.filter((r) => r.tool === 'scan').length > scansBefore);
    assert.notEqual(await old.kill('SIGKILL'), 0);
    const next = await spawn({ ...stack.env, MODEL_TIER_FORTE: 'forte-v2' });
    try {
      assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
      assert.deepEqual(
        stack.model.requests.slice(first).map((r) => r.model),
        ['forte-v1', 'forte-v2'],
      );
    } finally {
      await next.kill('SIGTERM');
    }
  });
});
