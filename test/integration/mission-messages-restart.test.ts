import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

describe('a message across a worker killed between its accept and its delivery', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  const spawn = () => workers.spawn(stack.env);
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'steady', tools: ['lab.scan'], maxTurns: 3 }));
  });
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  it('is delivered once, in the next model request, by the worker that took over', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'after the restart' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_s', name: 'lab__scan', input: { target: 't' } }] } }, { reply: { text: 'done' } });
    const first = await spawn();
    const { id } = await stack.api.startMission(key, { skill: 'steady', objective: 'Outlive the worker.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    const sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'Survive this.' } });
    assert.equal(sent.status, 202);
    assert.notEqual(await first.kill('SIGKILL'), 0);
    await spawn();

    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const requests = stack.model.requests.filter((r) => !r.factory);
    assert.equal(requests.length, 2);
    const last = requests[1]!.messages.at(-1) as { content: Array<{ type: string; text?: string }> };
    assert.deepEqual(
      last.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])),
      ['Survive this.'],
      'delivered once, after the tool result',
    );
    const delivered = eventsOf((await stack.api.readEvents(key, id)).frames).filter((e) => e.type === 'message');
    assert.equal(delivered.length, 1);
    const row = await stack.db
      .selectFrom('mission_messages')
      .select(['seq', 'content'])
      .where('mission_id', '=', id)
      .where('seq', '=', 2)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.stringify(row.content).split('Survive this.').length - 1, 1, 'stored once in the transcript');
  });
});
