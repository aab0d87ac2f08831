import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mission's JSON, as the API client gives it
type Mission = any;

/** Polls GET /missions/:id until `done` holds for its body. */
async function waitFor(stack: TestStack, key: string, id: string, done: (m: Mission) => boolean): Promise<Mission> {
  let last: Mission;
  await until(async () => done((last = (await stack.api.getMission(key, id)).body)), { timeoutMs: 60_000 });
  return last;
}

describe('sessions: continue after the answer', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chat', tools: ['lab.lookup'], maxTurns: 3 }));
    await stack.api.createSkill(
      key,
      [
        '---',
        'name: chatty',
        'description: A skill that keeps talking.',
        'metadata:',
        '  cadenza-session: "true"',
        '---',
        'Chat.',
        '',
      ].join('\n'),
    );
  });
  after(() => stack.stop());

  it('idle → message → second exchange with the transcript kept → close ends it completed', async () => {
    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'First answer.' } }, { reply: { text: 'Second answer.' } });
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Talk to me.', session: true });

    const idle = await waitFor(stack, key, id, (m) => m.status === 'idle');
    assert.equal(idle.result.text, 'First answer.');
    assert.deepEqual(
      idle.exchanges.map((e: { text: string }) => e.text),
      ['First answer.'],
    );
    assert.equal(idle.session, true);
    const attributes = (await stack.handle(id).describe()).searchAttributes as Record<string, unknown>;
    assert.deepEqual(attributes.CadenzaStatus, ['idle'], 'the Web UI can list idle sessions');

    const sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'And then?' } });
    assert.equal(sent.status, 202);
    const second = await waitFor(stack, key, id, (m) => m.status === 'idle' && m.exchanges?.length === 2);
    assert.equal(second.result.text, 'Second answer.');
    assert.equal(second.exchanges[1].metrics.turns, 1, "each exchange's metrics are its own");
    const request = stack.model.requests[first + 1]!;
    const roles = (request.messages as Array<{ role: string }>).map((m) => m.role);
    assert.deepEqual(roles, ['user', 'assistant', 'user'], 'objective, first answer, the message');
    assert.equal(request.lastUserText, 'And then?');

    const closed = await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    assert.equal(closed.status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.result.text, 'Second answer.');
    assert.equal(ended.exchanges.length, 2);
    const row = await stack.db.selectFrom('missions').select(['status', 'exchanges']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'completed');
    assert.equal(row.exchanges?.length, 2);
    // Each exchange leaves a completion memory and a feed row, as a mission's end does; the session's end adds none twice.
    const memories = await stack.db
      .selectFrom('memories')
      .select(['source_key', 'content'])
      .where('mission_id', '=', id)
      .orderBy('source_key')
      .execute();
    assert.deepEqual(
      memories.map((m) => m.source_key),
      [`mission/${id}/exchange/1`, `mission/${id}/exchange/2`],
    );
    assert.match(memories[1]!.content, /\(exchange 2\).*Second answer\./);
    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    const kinds = (feed.body.items as Array<{ kind: string }>).map((f) => f.kind).sort();
    assert.deepEqual(kinds, ['exchange_end', 'exchange_end', 'mission_end']);

    const statuses = eventsOf((await stack.api.readEvents(key, id)).frames).flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.deepEqual(statuses, ['running', 'idle', 'running', 'idle', 'completed']);
    const late = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'still there?' } });
    assert.equal(late.status, 409);
    assert.match(late.body.error.message, /start a new mission \(POST \/api\/v1\/missions\)/);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key })).status, 409);
  });

  it('each exchange reads the user context as it is then: a preference and a memory saved while idle reach the next one', async () => {
    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'Noted.' } }, { reply: { text: 'In kilometres, then.' } });
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Plan my ride.', session: true });
    await waitFor(stack, key, id, (m) => m.status === 'idle');
    const opening = stack.model.requests[first]!.system;
    assert.doesNotMatch(opening, /kilometres/);

    const profile = await stack.api.request('PUT', '/api/v1/profile', { key, body: { preferences: { units: 'kilometres' } } });
    assert.equal(profile.status, 200);
    const memory = await stack.api.request('POST', '/api/v1/memories', { key, body: { content: 'My bike is a blue tandem.' } });
    assert.equal(memory.status, 201);
    await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'How far is it?' } });
    await waitFor(stack, key, id, (m) => m.status === 'idle' && m.exchanges?.length === 2);
    const system = stack.model.requests[first + 1]!.system;
    assert.match(system, /Preference, units: kilometres/);
    assert.match(system, /My bike is a blue tandem\./);
    // The session's own first answer is in its transcript, not again among the "results of earlier missions".
    assert.doesNotMatch(system, /Results of earlier missions[\s\S]*Noted\./);
    await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    await stack.api.waitForEnd(key, id);
  });

  it("a skill's cadenza-session makes its missions sessions; cancel ends an idle one cancelled", async () => {
    stack.model.enqueue({ reply: { text: 'Hello.' } });
    const { id } = await stack.api.startMission(key, { skill: 'chatty', objective: 'Hi.' });
    await waitFor(stack, key, id, (m) => m.status === 'idle');
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'cancelled');
  });

  it('a message’s limits hold for its exchange only: that exchange ends by its budget, the next runs in full', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'x' } }));
    stack.model.enqueue(
      { reply: { text: 'First.' } },
      { reply: { toolUses: [{ id: 'tu_lim_1', name: 'lab__lookup', input: { q: 'a' } }] } },
      { reply: { text: 'Cut short by my limit.' } },
      { reply: { toolUses: [{ id: 'tu_lim_2', name: 'lab__lookup', input: { q: 'b' } }] } },
      { reply: { text: 'Looked it up in full.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Talk.', session: true });
    await waitFor(stack, key, id, (m) => m.status === 'idle');
    const limited = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, {
      key,
      body: { text: 'Look it up, cheaply.', limits: { maxTokens: 10 } },
    });
    assert.equal(limited.status, 202, JSON.stringify(limited.body));
    const second = await waitFor(stack, key, id, (m) => m.status === 'idle' && m.exchanges?.length === 2);
    assert.equal(second.exchanges[1].stoppedBy, 'budget');
    assert.equal(second.exchanges[1].text, 'Cut short by my limit.');
    assert.equal(second.exchanges[1].metrics.toolCalls, 0, 'the call it asked for was not run');
    await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'Now look it up properly.' } });
    const third = await waitFor(stack, key, id, (m) => m.status === 'idle' && m.exchanges?.length === 3);
    assert.equal(third.exchanges[2].stoppedBy, 'answer', 'the next exchange has no such limit');
    assert.equal(third.exchanges[2].metrics.toolCalls, 1);
    const bad = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'x', limits: { maxTokens: 0 } } });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /limits\.maxTokens/);
    await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  });

  it('a mission that is not a session cannot be closed (409) and ends when it answers', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 1_500, body: { hit: 'x' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_c', name: 'lab__lookup', input: { q: 'c' } }] } }, { reply: { text: 'done' } });
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'One shot.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === 'c'));
    const close = await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    assert.equal(close.status, 409);
    assert.match(close.body.error.message, /not a session/);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  });
});

describe('sessions: the idle TTL', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { SESSION_IDLE_TTL_S: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chat' }));
  });
  after(() => stack.stop());

  it('an idle session ends completed once SESSION_IDLE_TTL_S passes without a message', async () => {
    stack.model.enqueue({ reply: { text: 'Only answer.' } });
    const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Brief.', session: true });
    const ended = await waitFor(stack, key, id, (m) => m.status === 'completed');
    assert.equal(ended.result.text, 'Only answer.');
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const idleAt = Date.parse(events.find((e) => e.type === 'status' && e.status === 'idle')!.at);
    const endAt = Date.parse(events.at(-1)!.at);
    assert.ok(endAt - idleAt >= 2_000, `ended ${endAt - idleAt} ms after going idle`);
    assert.deepEqual(events.at(-1), { ...events.at(-1), type: 'status', status: 'completed' });
  });
});
