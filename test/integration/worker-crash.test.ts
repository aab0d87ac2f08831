import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../helpers/test-stack.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

describe('a worker process killed mid-mission', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'survivor', tools: ['lab.scan'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('completes on a restarted worker: the interrupted tool call runs again with the same idempotency key', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'after restart' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_k', name: 'lab__scan', input: { target: 't' } }] } },
      { reply: { text: 'survived' } },
    );
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'survivor', objective: 'Survive a crash.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));

    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'survived');
      const calls = stack.tools.requests.filter((r) => r.tool === 'scan');
      assert.equal(calls.length, 2, 'the tool ran at least once: again after the crash');
      assert.equal(calls[0]!.headers['idempotency-key'], calls[1]!.headers['idempotency-key']);
      assert.equal(calls[0]!.headers['idempotency-key'], `mission-${id}/tu_k`);
      const row = await stack.db.selectFrom('tool_calls').selectAll().where('mission_id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.attempt, 2);
      assert.match(stack.model.requests.at(-1)!.toolResults[0]!.content, /after restart/);
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
