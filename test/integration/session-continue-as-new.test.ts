import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { chainOf, denseSeqs, followSession, missionRuns } from '../../testkit/session-runs.ts';
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
    const session = followSession(stack, key, id);
    await session.idle(1);
    const lookUp = { text: 'Look it up.', idempotencyKey: 'look-1' };
    const sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: lookUp });
    assert.equal(sent.status, 202);
    await session.idle(2);
    await session.exchange('And then?', 3);
    const third = await session.mission(3);
    assert.deepEqual(
      third.exchanges.map((e: { text: string }) => e.text),
      ['First answer.', 'Second answer.', 'Third answer.'],
      'GET shows the exchanges of every run',
    );
    assert.equal(third.status, 'idle');
    assert.deepEqual(
      third.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]),
      [['tu_1', 'completed']],
      'GET lists the tool calls of the runs before the latest',
    );
    assert.equal(third.result.text, 'Third answer.');
    // A retried request (same key) that reaches a later run: recognised, not taken twice.
    const retried = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: lookUp });
    assert.equal(retried.status, 202);
    assert.deepEqual(retried.body, { messageId: sent.body.messageId, position: 0 });
    assert.equal((await stack.api.getMission(key, id)).body.status, 'idle', 'no exchange started by the retry');
    const lastRequest = stack.model.requests.at(-1)!;
    assert.equal(lastRequest.lastUserText, 'And then?');
    assert.equal(lastRequest.messages.length, 7, 'the transcript of every run: objective, answers, tool use and result, messages');

    await chainOf(stack.temporal, id, ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'RUNNING']);
    const attributes = (await stack.handle(id).describe()).searchAttributes as Record<string, unknown>;
    assert.deepEqual(attributes.CadenzaStatus, ['idle']);
    assert.deepEqual(attributes.CadenzaSkill, ['chat'], 'the search attributes follow the chain');

    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.result.text, 'Third answer.');
    assert.equal(ended.exchanges.length, 3);

    const live = (await session.reading).frames;
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
    const session = followSession(stack, key, id);
    await session.idle(1);
    await session.exchange('Again.', 2);
    // The idle event comes just before the run continues as new: a cancel then would close that run instead.
    await chainOf(stack.temporal, id, ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'RUNNING']);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'cancelled');
    const row = await stack.db.selectFrom('missions').select(['status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'cancelled', 'the end is recorded');
    await chainOf(stack.temporal, id, ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW', 'CANCELLED']);
    const statuses = eventsOf((await session.reading).frames).flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.deepEqual(statuses, ['running', 'idle', 'running', 'idle', 'cancelled']);
  });
});

describe('a 200-exchange session (SESSION_HISTORY_EVENTS at its default)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chat', maxTurns: 2 }));
  });
  after(() => stack.stop());

  it('ends with all 200 exchanges recorded, its runs each of bounded history', async () => {
    const EXCHANGES = 200;
    stack.model.enqueue(...Array.from({ length: EXCHANGES }, (_, i) => ({ reply: { text: `Answer ${i + 1}.` } })));
    const startedAt = Date.now();
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Keep going.', session: true });
    const session = followSession(stack, key, id);
    await session.idle(1);
    for (let n = 2; n <= EXCHANGES; n++) await session.exchange(`Message ${n}.`, n);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    console.log(`# ${EXCHANGES} exchanges in ${Date.now() - startedAt} ms`);
    assert.equal(ended.status, 'completed');
    assert.deepEqual(
      ended.exchanges.map((e: { text: string }) => e.text),
      Array.from({ length: EXCHANGES }, (_, i) => `Answer ${i + 1}.`),
    );
    const row = await stack.db.selectFrom('missions').select(['exchanges']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.exchanges?.length, EXCHANGES);
    const frames = (await session.reading).frames;
    denseSeqs(frames);
    assert.equal(eventsOf(frames).filter((e) => e.type === 'message').length, EXCHANGES - 1, 'each message delivered once');

    const runs = await missionRuns(stack.temporal, id);
    assert.ok(runs.length > 5, `a chain of runs (${runs.length})`);
    const longest = Math.max(...runs.map((r) => r.historyLength));
    assert.ok(longest < 300, `every run's history stays short (the longest: ${longest} events)`);
  });
});
