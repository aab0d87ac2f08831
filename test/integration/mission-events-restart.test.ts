import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

describe('an SSE stream across a worker restart', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  const spawn = () => workers.spawn(stack.env);
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'survivor', tools: ['lab.scan', 'lab.lookup'], maxTurns: 4 }));
  });
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  it('keeps every event in order, without loss or duplicate, while the worker is killed and replaced, and after the close', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'after the restart' } }));
    stack.tools.on('lookup', () => ({ delayMs: 300, body: { ok: true } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_scan', name: 'lab__scan', input: { target: 't' } }] } },
      { reply: { toolUses: [{ id: 'tu_look', name: 'lab__lookup', input: { q: 'then' } }] } },
      { reply: { text: 'survived' } },
    );
    const first = await spawn();
    const { id } = await stack.api.startMission(key, { skill: 'survivor', objective: 'Outlive the worker.' });
    const reading = stack.api.readEvents(key, id);
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawn();
    try {
      const live = eventsOf((await reading).frames);
      assert.deepEqual(
        live.map((e) => e.seq),
        live.map((_, i) => i + 1),
        'dense seq from 1: nothing lost, nothing twice',
      );
      assert.deepEqual(
        live.map((e) => e.type),
        [
          'status',
          'turn',
          'tool_start',
          'embed',
          'tool_end',
          'embed',
          'turn',
          'tool_start',
          'embed',
          'tool_end',
          'embed',
          'turn',
          'status',
        ],
      );
      assert.deepEqual(live.at(-1), { ...live.at(-1)!, type: 'status', status: 'completed' });
      const closed = eventsOf((await stack.api.readEvents(key, id)).frames);
      assert.deepEqual(closed, live, 'after the close, a new stream serves the same log');
      const resumed = eventsOf((await stack.api.readEvents(key, id, { lastEventId: '4' })).frames);
      assert.deepEqual(resumed, live.slice(4), 'and resumes after Last-Event-ID');
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
