import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { chainOf, denseSeqs, followSession } from '../../testkit/session-runs.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

describe('a session that continues as new across worker SIGKILLs', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  const spawn = () => workers.spawn(stack.env);
  before(async () => {
    stack = await startTestStack({ worker: false, env: { SESSION_HISTORY_EVENTS: '1' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'steady', tools: ['lab.scan'], maxTurns: 3 }));
  });
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  it('loses and duplicates nothing: killed mid-exchange in a continued run, then while idle', async () => {
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { hang: true } : { body: { found: 'after the restart' } }));
    stack.model.enqueue(
      { reply: { text: 'First.' } },
      { reply: { toolUses: [{ id: 'tu_s', name: 'lab__scan', input: { target: 't' } }] } },
      { reply: { text: 'Second.' } },
      { reply: { text: 'Third.' } },
    );
    let worker = await spawn();
    const { id } = await stack.api.startMission(key, { skill: 'steady', objective: 'Outlive the workers.', session: true });
    const session = followSession(stack, key, id);
    await session.idle(1);
    const sending = session.exchange('Scan it.', 2);
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    assert.notEqual(await worker.kill('SIGKILL'), 0);
    worker = await spawn();
    await sending;
    assert.notEqual(await worker.kill('SIGKILL'), 0);
    await spawn();
    await session.exchange('Once more.', 3);
    const third = await session.mission(3);
    assert.deepEqual(
      third.exchanges.map((e: { text: string }) => e.text),
      ['First.', 'Second.', 'Third.'],
    );
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 202);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    assert.equal(stack.model.requests.filter((r) => !r.factory).length, 4, 'no model call twice');
    const frames = (await session.reading).frames;
    denseSeqs(frames);
    const events = eventsOf(frames);
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'status' ? [e.status] : [])),
      ['running', 'idle', 'running', 'idle', 'running', 'idle', 'completed'],
    );
    assert.equal(events.filter((e) => e.type === 'message').length, 2, 'each message delivered once');
    assert.equal(events.filter((e) => e.type === 'tool_end').length, 1);
    const rows = await stack.db.selectFrom('mission_messages').select(['content']).where('mission_id', '=', id).execute();
    assert.equal(JSON.stringify(rows).split('Scan it.').length - 1, 1, 'the message stored once in the transcript');
    await chainOf(stack.temporal, id, ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'COMPLETED']);
  });
});
