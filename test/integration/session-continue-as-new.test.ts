import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { denseSeqs, exchange, idleAfter, missionRuns } from '../../testkit/session-runs.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('sessions continue as new between exchanges (SESSION_HISTORY_EVENTS=1: after every exchange)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { SESSION_HISTORY_EVENTS: '1' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chat', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('keeps answering with the transcript, its stream continuous across each run and resumable from before it', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'kept' } }));
    stack.model.enqueue(
      { reply: { text: 'First answer.' } },
      { reply: { toolUses: [{ id: 'tu_1', name: 'lab__lookup', input: { q: 'a' } }] } },
      { reply: { text: 'Second answer.' } },
      { reply: { text: 'Third answer.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Talk to me.', session: true });
    // A client watching from the start, through every run.
    const watching = stack.api.readEvents(key, id);
    await idleAfter(stack, key, id, 1);
    await exchange(stack, key, id, 'Look it up.', 2);
    const third = await exchange(stack, key, id, 'And then?', 3);
    assert.deepEqual(
      third.exchanges.map((e: { text: string }) => e.text),
      ['First answer.', 'Second answer.', 'Third answer.'],
      'GET shows the exchanges of every run',
    );
    assert.equal(third.result.text, 'Third answer.');
    const lastRequest = stack.model.requests.at(-1)!;
    assert.equal(lastRequest.lastUserText, 'And then?');
    assert.equal(lastRequest.messages.length, 7, 'the transcript of every run: objective, answers, tool use and result, messages');

    const runs = await missionRuns(stack.temporal, id);
    assert.deepEqual(
      runs.map((r) => r.status),
      ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'RUNNING'],
      'one run per exchange, chained under the mission id',
    );
    const attributes = (await stack.handle(id).describe()).searchAttributes as Record<string, unknown>;
    assert.deepEqual(attributes.CadenzaStatus, ['idle']);
    assert.deepEqual(attributes.CadenzaSkill, ['chat'], 'the search attributes follow the chain');

    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.result.text, 'Third answer.');
    assert.equal(ended.exchanges.length, 3);

    const live = (await watching).frames;
    const seqs = denseSeqs(live);
    const events = eventsOf(live);
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'status' ? [e.status] : [])),
      ['running', 'idle', 'running', 'idle', 'running', 'idle', 'completed'],
    );
    assert.equal(events.filter((e) => e.type === 'message').length, 2, 'each message delivered once');
    assert.equal(events.filter((e) => e.type === 'tool_end').length, 1);
    // Resumed from the first run's last event (its events are stored; the latest run holds none of them).
    const firstIdle = events.find((e) => e.type === 'status' && e.status === 'idle')!.seq;
    const resumed = await stack.api.readEvents(key, id, { lastEventId: String(firstIdle) });
    denseSeqs(resumed.frames, firstIdle);
    assert.deepEqual(eventsOf(resumed.frames), events.slice(firstIdle), 'the events after it, as the live stream had them');
    assert.deepEqual(eventsOf((await stack.api.readEvents(key, id)).frames), events, 'a stream read afterwards has them all');
    assert.equal(seqs.at(-1), events.length);
  });

  it('an idle session that continued as new is cancelled by its id', async () => {
    stack.model.enqueue({ reply: { text: 'One.' } }, { reply: { text: 'Two.' } });
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Hi.', session: true });
    await idleAfter(stack, key, id, 1);
    await exchange(stack, key, id, 'Again.', 2);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'cancelled');
    const row = await stack.db.selectFrom('missions').select(['status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'cancelled', 'the end is recorded');
    const runs = await missionRuns(stack.temporal, id);
    assert.deepEqual(
      runs.map((r) => r.status),
      ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CANCELLED'],
    );
    const statuses = eventsOf((await stack.api.readEvents(key, id)).frames).flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.deepEqual(statuses, ['running', 'idle', 'running', 'idle', 'cancelled']);
  });
});
