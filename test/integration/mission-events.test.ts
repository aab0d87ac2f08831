import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('progress over SSE', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'stepper', tools: ['lab.lookup'], maxTurns: 5 }));
  });
  after(() => stack.stop());

  const slowMission = async (objective: string) => {
    stack.tools.on('lookup', () => ({ delayMs: 1_200, body: { ok: true } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ name: 'lab__lookup', input: { q: '1' } }] } },
      { reply: { toolUses: [{ name: 'lab__lookup', input: { q: '2' } }] } },
      { reply: { text: 'finished' } },
    );
    return (await stack.api.startMission(key, { skill: 'stepper', objective })).id;
  };

  it('resumes from Last-Event-ID with neither gap nor duplicate', async () => {
    const endedBefore = stack.relay.queryCounts().endedFromRow;
    const id = await slowMission('resume me');
    const first = await stack.api.readEvents(key, id, { stopAfter: 3 });
    const seen = eventsOf(first.frames);
    assert.deepEqual(
      seen.map((e) => e.seq),
      [1, 2, 3],
    );
    const rest = eventsOf((await stack.api.readEvents(key, id, { lastEventId: '3' })).frames);
    assert.equal(rest[0]!.seq, 4, 'resumes right after the last id');
    const all = [...seen, ...rest];
    assert.deepEqual(
      all.map((e) => e.seq),
      all.map((_, i) => i + 1),
    );
    assert.deepEqual(
      all.map((e) => e.type),
      ['status', 'turn', 'tool_start', 'embed', 'tool_end', 'embed', 'turn', 'tool_start', 'embed', 'tool_end', 'embed', 'turn', 'status'],
    );
    // The live stream ended on the final events the completion stored, without a query of the closed run; a late
    // reader's replay of that run rebuilds exactly the same events.
    assert.equal(stack.relay.queryCounts().endedFromRow, endedBefore + 1, 'the live stream ended from the stored final events');
    const full = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(full, all, 'a late reader gets the same log from the start');
    const row = await stack.db.selectFrom('missions').select('final_events').where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row.final_events, all.slice(-1), 'the row keeps the terminal event as the workflow logged it');
  });

  it('serves every subscriber of a mission from one poller, with keep-alive comments while idle', async () => {
    const id = await slowMission('watch me twice');
    const readers = [stack.api.readEvents(key, id), stack.api.readEvents(key, id)];
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === '1' && r.endedAt === undefined));
    assert.equal(stack.relay.pollerCount(), 1);
    const [a, b] = await Promise.all(readers);
    assert.deepEqual(eventsOf(a!.frames), eventsOf(b!.frames));
    assert.ok(
      a!.frames.some((f) => f.comment === 'keep-alive'),
      'idle stretches carry keep-alive comments',
    );
    assert.equal(stack.relay.pollerCount(), 0, 'the poller stops after the terminal event');
  });

  it('streams a finished mission in full and closes', async () => {
    stack.model.enqueue({ reply: { text: 'quick' } });
    const { id } = await stack.api.startMission(key, { skill: 'stepper', objective: 'quick one' });
    await stack.api.waitForEnd(key, id);
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(
      events.map((e) => e.type),
      ['status', 'turn', 'status'],
    );
  });
});
