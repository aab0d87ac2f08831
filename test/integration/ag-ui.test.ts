import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

type Seen = BaseEvent & { delta?: string; toolCallName?: string; message?: string; code?: string; result?: { missionId: string } };

/** Cadenza's AG-UI face, driven by `@ag-ui/client`'s HttpAgent against the real stack. */
describe('the AG-UI endpoint at /ag-ui', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], { tenantId: 'acme', userId: 'mia' });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack?.stop());

  const agent = (threadId = randomUUID(), withKey = key) =>
    new HttpAgent({ url: `${stack.url}/ag-ui`, threadId, headers: { authorization: `Bearer ${withKey}` } });
  /** One run of the agent with a user message; every event the client saw, in order. */
  const run = async (a: HttpAgent, text: string, forwardedProps: Record<string, unknown> = {}) => {
    const seen: Seen[] = [];
    a.addMessage({ id: randomUUID(), role: 'user', content: text });
    await a.runAgent({ forwardedProps }, { onEvent: ({ event }) => void seen.push(event as Seen) });
    return seen;
  };
  const types = (seen: Seen[]) => seen.map((e) => e.type as string);

  it('streams a run with a tool call and streamed text, in order, and the thread is the session', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'found it' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_agui', name: 'lab__lookup', input: { q: 'tides in Porto' } }] } },
      { reply: { text: 'Found it over AG-UI, word by word.' }, chunkDelayMs: 30 },
    );
    const a = agent();
    const seen = await run(a, 'Look it up.', { skill: 'scanner' });
    const t = types(seen);
    const order = [
      'RUN_STARTED',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ];
    const at = order.map((type) => t.indexOf(type));
    assert.ok(
      at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)),
      t.join(' '),
    );
    assert.equal(seen.find((e) => e.type === 'TOOL_CALL_START')!.toolCallName, 'lab.lookup');
    assert.deepEqual(JSON.parse(String(seen.find((e) => e.type === 'TOOL_CALL_ARGS')!.delta)), { q: 'tides in Porto' });
    // The client's own reading of the stream: the assistant's tool call with the model's arguments.
    const call = a.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).find((c) => c.id === 'tu_agui');
    assert.deepEqual(JSON.parse(call!.function.arguments), { q: 'tides in Porto' });
    const text = seen
      .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.delta)
      .join('');
    assert.equal(text, 'Found it over AG-UI, word by word.');
    assert.equal(seen.at(-1)!.result!.missionId, a.threadId, 'the thread is the mission');
    assert.ok(
      a.messages.some((m) => m.role === 'assistant' && m.content === text),
      'the client holds the answer',
    );

    stack.model.enqueue({ reply: { text: 'And a second answer.' } });
    const second = await run(a, 'Once more.');
    assert.equal(types(second).at(-1), 'RUN_FINISHED');
    assert.equal(
      second
        .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
        .map((e) => e.delta)
        .join(''),
      'And a second answer.',
    );
    assert.ok(!types(second).includes('TOOL_CALL_START'), 'only this exchange’s events');
    const mission = (await stack.api.getMission(key, a.threadId)).body;
    assert.equal(mission.status, 'idle');
    assert.deepEqual(
      mission.exchanges.map((e: { text: string }) => e.text),
      ['Found it over AG-UI, word by word.', 'And a second answer.'],
    );
  });

  it('the thread’s embeds are the run’s state: a snapshot when it starts, a delta as each changes', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'state' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_state', name: 'lab__lookup', input: { q: 's' } }] } },
      { reply: { text: 'Done.' } },
    );
    const a = new HttpAgent({
      url: `${stack.url}/ag-ui`,
      threadId: randomUUID(),
      headers: { authorization: `Bearer ${key}` },
      initialState: { mine: 'kept' },
    });
    const seen = await run(a, 'Look it up for the state.', { skill: 'scanner' });
    const t = types(seen);
    assert.equal(t.indexOf('STATE_SNAPSHOT'), 1, t.join(' '));
    assert.deepEqual((seen[1] as Seen & { snapshot: unknown }).snapshot, { mine: 'kept', embeds: {} });
    const deltas = seen.filter((e) => e.type === 'STATE_DELTA') as Array<Seen & { delta: Array<{ value: { status: string } }> }>;
    assert.deepEqual(
      deltas.map((d) => d.delta[0]!.value.status),
      ['processing', 'finished'],
    );
    const { body } = await stack.api.request('GET', `/api/v1/embeds?missionId=${a.threadId}`, { key });
    const [embed] = body.items as Array<{ id: string; toolUseId: string }>;
    const state = a.state as { mine: string; embeds: Record<string, { toolUseId: string; tool: string; status: string }> };
    assert.equal(state.mine, 'kept');
    assert.deepEqual(Object.keys(state.embeds), [embed!.id], 'the embed REST lists, by its id');
    assert.equal(state.embeds[embed!.id]!.toolUseId, 'tu_state');
    assert.equal(state.embeds[embed!.id]!.status, 'finished');

    // The thread's next run starts from its embeds as stored.
    stack.model.enqueue({ reply: { text: 'Nothing new.' } });
    const next = await run(a, 'Anything else?');
    const snapshot = (next.find((e) => e.type === 'STATE_SNAPSHOT') as Seen & { snapshot: typeof state }).snapshot;
    assert.equal(snapshot.embeds[embed!.id]!.status, 'finished');
  });

  it('a failed mission is a RUN_ERROR naming why', async () => {
    stack.model.enqueue({ status: 400, message: 'messages: bad block' });
    const seen: Seen[] = [];
    const a = agent();
    a.addMessage({ id: randomUUID(), role: 'user', content: 'Fail.' });
    await a.runAgent({ forwardedProps: { skill: 'scanner' } }, { onEvent: ({ event }) => void seen.push(event as Seen) }).catch(() => {});
    const error = seen.find((e) => e.type === 'RUN_ERROR');
    assert.ok(error, types(seen).join(' '));
    assert.match(error.message!, /bad block/);
    assert.equal((await stack.api.getMission(key, a.threadId)).body.status, 'failed');
  });

  it('a cancelled mission is a RUN_ERROR', async () => {
    stack.tools.on('lookup', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_cancel', name: 'lab__lookup', input: { q: 'q' } }] } });
    const seen: Seen[] = [];
    const a = agent();
    a.addMessage({ id: randomUUID(), role: 'user', content: 'Wait forever.' });
    const running = a
      .runAgent({ forwardedProps: { skill: 'scanner' } }, { onEvent: ({ event }) => void seen.push(event as Seen) })
      .catch(() => {});
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'lookup' && r.endedAt === undefined));
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${a.threadId}/cancel`, { key })).status, 202);
    await running;
    assert.equal(types(seen).at(-1), 'RUN_ERROR', types(seen).join(' '));
    assert.equal(seen.at(-1)!.code, 'cancelled');
  });

  const post = (body: unknown, withKey: string | null = key) =>
    fetch(`${stack.url}/ag-ui`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(withKey ? { authorization: `Bearer ${withKey}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const input = (over: Record<string, unknown> = {}) => ({
    threadId: randomUUID(),
    runId: randomUUID(),
    messages: [{ id: 'm1', role: 'user', content: 'Hello.' }],
    tools: [],
    context: [],
    forwardedProps: { skill: 'scanner' },
    ...over,
  });

  /** Reads an SSE response's blocks until `stop` says so (or the stream ends): AG-UI event types and the last `id:`. */
  const readBlocks = async (res: globalThis.Response, stop: (types: string[], lastId: string | undefined) => boolean = () => false) => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const types: string[] = [];
    let lastId: string | undefined;
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop()!;
      for (const block of blocks) {
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        if (id) lastId = id;
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data) types.push((JSON.parse(data) as { type: string }).type);
      }
      if (stop(types, lastId)) {
        await reader.cancel();
        break;
      }
    }
    return { types, lastId };
  };

  it('a dropped stream leaves the mission running, and the same run with Last-Event-ID resumes after it', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 1_500, body: { hit: 'late' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_drop', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'Resumed answer.' } },
    );
    // No skill named: the caller's only active skill runs.
    const body = input({ forwardedProps: {} });
    const first = await post(body);
    assert.equal(first.status, 200);
    const dropped = await readBlocks(first, (types, lastId) => types.includes('TOOL_CALL_END') && lastId !== undefined);
    assert.equal((await stack.api.getMission(key, body.threadId)).body.status, 'running', 'not cancelled by the drop');

    const again = await fetch(`${stack.url}/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'last-event-id': dropped.lastId! },
      body: JSON.stringify(body),
    });
    const resumed = await readBlocks(again);
    // Streamed text may come in several pieces: consecutive ones count once.
    const kinds = resumed.types.filter((t, i) => t !== resumed.types[i - 1]);
    // The resumed run's state starts from the embed stored while it was away.
    assert.deepEqual(kinds, [
      'RUN_STARTED',
      'STATE_SNAPSHOT',
      'TOOL_CALL_RESULT',
      'STATE_DELTA',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    const mission = (await stack.api.getMission(key, body.threadId)).body;
    assert.equal(mission.skill.name, 'scanner');
    assert.deepEqual(
      mission.exchanges.map((e: { text: string }) => e.text),
      ['Resumed answer.'],
      'the resumed run sent nothing again',
    );
  });

  it('answers 401 without a key, and someone else’s thread is not found', async () => {
    assert.equal((await post(input(), null)).status, 401);
    const readOnly = await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'mia' });
    const refused = await post(input(), readOnly);
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /mission\.run/);
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    await stack.api.createSkill(ned, skillMd({ name: 'secret-skill' }));
    const { id } = await stack.api.startMission(ned, { skill: 'secret-skill', objective: 'Mine.', session: true });
    const stolen = await post(input({ threadId: id }));
    assert.equal(stolen.status, 404);
    assert.match(JSON.stringify(await stolen.json()), /threadId/);
  });

  it('bad input is a 4xx naming the field', async () => {
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ messages: [] }, 400, /messages/],
      [{ messages: [{ id: 'a', role: 'assistant', content: 'Hi.' }] }, 400, /messages/],
      [{ forwardedProps: { skill: 'no-such-skill' } }, 404, /no-such-skill/],
      [{ threadId: 'bad thread!' }, 400, /threadId/],
      [{ threadId: 'thread-1' }, 400, /threadId: a UUID/],
      [{ runId: 7 }, 400, /runId/],
    ];
    for (const [over, status, named] of cases) {
      const res = await post(input(over));
      const body = await res.text();
      assert.equal(res.status, status, `${JSON.stringify(over)}: ${body}`);
      assert.match(body, named);
    }
  });
});
