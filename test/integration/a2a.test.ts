import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Role, TaskState, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

/** Cadenza's A2A face, driven by the official SDK's client over JSON-RPC against the real stack. */
describe('the A2A agent at /a2a', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], { tenantId: 'acme', userId: 'ava' });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 3 }));
  });
  after(async () => {
    await stack?.stop();
  });

  const connect = (withKey = key): Promise<Client> => {
    const authed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${withKey}`);
      return fetch(input, { ...init, headers });
    };
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
    });
    return new ClientFactory(options).createFromUrl(stack.url);
  };
  const send = (text: string, o: { contextId?: string; taskId?: string; metadata?: Record<string, unknown> } = {}): SendMessageRequest => ({
    tenant: '',
    metadata: {},
    configuration: undefined,
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      taskId: o.taskId ?? '',
      contextId: o.contextId ?? '',
      extensions: [],
      metadata: o.metadata ?? {},
      referenceTaskIds: [],
    },
  });
  const textOf = (task: Task, artifact = -1): string | undefined => {
    const part = task.artifacts.at(artifact)?.parts[0]?.content;
    return part?.$case === 'text' ? part.value : undefined;
  };
  const asTask = (result: unknown): Task => {
    assert.ok(result && typeof result === 'object' && 'status' in result, `a task, not ${JSON.stringify(result)}`);
    return result as Task;
  };

  it('serves the service’s card publicly and the caller’s skills on its own card', async () => {
    const cardOf = async (version?: string) =>
      (await (await fetch(`${stack.url}/.well-known/agent-card.json`, { headers: version ? { 'a2a-version': version } : {} })).json()) as {
        url?: string;
        supportedInterfaces: Array<{ url: string; protocolVersion: string }>;
        skills: unknown[];
        securitySchemes: unknown;
      };
    const card = await cardOf('1.0');
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.url, i.protocolVersion]),
      [
        [`${stack.url}/a2a`, '1.0'],
        [`${stack.url}/a2a`, '0.3'],
      ],
    );
    assert.deepEqual(card.skills, [], 'no user’s skills on the public card');
    assert.ok(JSON.stringify(card.securitySchemes).includes('Bearer'));
    assert.equal((await cardOf()).url, `${stack.url}/a2a`, 'a client of protocol 0.3 reads the endpoint as the card’s url');
    assert.equal((await fetch(`${stack.url}/a2a/agent-card.json`)).status, 401);
    const own = (await (await fetch(`${stack.url}/a2a/agent-card.json`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      skills: Array<{ id: string }>;
    };
    assert.deepEqual(
      own.skills.map((s) => s.id),
      ['scanner'],
    );
    const client = await connect();
    // The SDK client reads the public card, then (the card offers it) the caller's own through GetExtendedAgentCard.
    const extended = await client.getAgentCard();
    assert.deepEqual(
      extended.skills.map((s) => s.id),
      ['scanner'],
    );
  });

  it('a message runs a mission of the named skill: the task is the mission, completed with its answer', async () => {
    stack.model.enqueue({ reply: { text: 'Sent over A2A.' } });
    const client = await connect();
    const task = asTask(await client.sendMessage(send('Say it.', { metadata: { skill: 'scanner', session: false } })));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(task), 'Sent over A2A.');
    const mission = await stack.api.getMission(key, task.id);
    assert.equal(mission.status, 200, 'the task id is the mission id');
    assert.equal(mission.body.result.text, 'Sent over A2A.');
    const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(got), 'Sent over A2A.', 'read back from the mission');

    // A client of protocol 0.3 (no A2A-Version header) reads the same task with 0.3's method name and shapes.
    const legacy = await fetch(`${stack.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: task.id } }),
    });
    const old = (await legacy.json()) as {
      result: { kind: string; status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> };
    };
    assert.equal(old.result.status.state, 'completed', JSON.stringify(old));
    assert.equal(old.result.artifacts[0]?.parts[0]?.text, 'Sent over A2A.');
  });

  it('a stream carries the task, its progress, the answer as an artifact and the session’s input-required, in order; the context continues it', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 200, body: { hit: 'found' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_a2a', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'First answer.' } },
    );
    const client = await connect();
    const events: StreamResponse[] = [];
    for await (const e of client.sendMessageStream(send('Look it up.'))) events.push(e);
    const kinds = events.map((e) => e.payload?.$case);
    assert.equal(kinds[0], 'task', kinds.join(' '));
    const task = events[0]!.payload!.value as Task;
    const statuses = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value] : []));
    const said = statuses.map((s) =>
      s.status?.message?.parts[0]?.content?.$case === 'text' ? s.status.message.parts[0].content.value : '',
    );
    assert.ok(said.includes('lab.lookup started') && said.includes('lab.lookup completed'), said.join(' | '));
    const artifactAt = kinds.lastIndexOf('artifactUpdate');
    assert.ok(artifactAt > 0 && artifactAt === kinds.length - 2, `the answer comes just before the last status: ${kinds.join(' ')}`);
    const artifact = events[artifactAt]!.payload!.value as { artifact: Task['artifacts'][number]; lastChunk: boolean };
    assert.equal(artifact.artifact.parts[0]?.content?.$case === 'text' && artifact.artifact.parts[0].content.value, 'First answer.');
    assert.equal(statuses.at(-1)!.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'a session that answered waits for input');

    stack.model.enqueue({ reply: { text: 'Second answer.' } });
    const next = asTask(await client.sendMessage(send('And then?', { contextId: task.contextId })));
    assert.equal(next.id, task.id, 'the same mission');
    assert.equal(next.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(next), 'Second answer.');
    const mission = await stack.api.getMission(key, task.id);
    assert.equal(mission.body.exchanges.length, 2, JSON.stringify(mission.body.exchanges));
    const listed = await client.listTasks({
      tenant: '',
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: undefined,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    assert.deepEqual(
      listed.tasks.map((t) => [t.id, t.artifacts.length]),
      [[task.id, 2]],
      'the context’s one task, an artifact per exchange',
    );
    assert.equal(mission.body.result.text, 'Second answer.');
  });

  it('a dropped stream leaves the mission running; a client re-attaches to it; CancelTask cancels it', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_hang_a2a', name: 'lab__scan', input: { target: 'a2a' } }] } });
    const client = await connect();
    const ac = new AbortController();
    let taskId: string | undefined;
    await assert.rejects(async () => {
      for await (const e of client.sendMessageStream(send('Scan forever.'), { signal: ac.signal })) {
        if (e.payload?.$case === 'task') taskId = e.payload.value.id;
        if (e.payload?.$case === 'statusUpdate' && /lab\.scan started/.test(JSON.stringify(e.payload.value.status?.message))) ac.abort();
      }
    });
    assert.ok(taskId);
    await new Promise((ok) => setTimeout(ok, 300));
    assert.equal((await stack.api.getMission(key, taskId)).body.status, 'running', 'dropping the stream cancels nothing');
    const resumed: StreamResponse[] = [];
    const reading = (async () => {
      for await (const e of client.resubscribeTask({ tenant: '', id: taskId! })) resumed.push(e);
    })();
    await until(async () => resumed.length > 0, { timeoutMs: 10_000, what: 'the re-attached stream’s task' });
    const cancelled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    assert.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
    await until(async () => (await stack.api.getMission(key, taskId!)).body.status === 'cancelled', {
      timeoutMs: 10_000,
      what: 'cancelled',
    });
    await reading;
    assert.equal(resumed[0]?.payload?.$case, 'task');
    const last = resumed.at(-1)?.payload;
    assert.ok(last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_CANCELED, JSON.stringify(last));
    const again = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    assert.equal(again.status?.state, TaskState.TASK_STATE_CANCELED, 'a canceled task cancels again as it is');
  });

  it('someone else’s task is not found, and bad input is a JSON-RPC error naming the problem', async () => {
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    await stack.api.createSkill(ned, skillMd({ name: 'secret-skill' }));
    await stack.api.createSkill(ned, skillMd({ name: 'other-skill' }));
    const { id } = await stack.api.startMission(ned, { skill: 'secret-skill', objective: 'Mine.' });
    const client = await connect();
    await assert.rejects(client.getTask({ tenant: '', id, historyLength: undefined }), /not found/i);
    await assert.rejects(client.cancelTask({ tenant: '', id, metadata: undefined }), /not found/i);
    await assert.rejects(client.sendMessage(send('More.', { taskId: id })), /not found/i);

    const neds = await connect(ned);
    await assert.rejects(neds.sendMessage(send('Which one?')), /metadata\.skill: name the skill to run, one of other-skill, secret-skill/);
    await assert.rejects(client.sendMessage(send('Go.', { metadata: { skill: 'nope' } })), /skill nope not found/);
    const readOnly = await connect(await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'ava' }));
    await assert.rejects(readOnly.sendMessage(send('Go.')), /mission\.run/);

    const raw = await fetch(`${stack.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'not-a-mission' } }),
    });
    assert.equal(raw.status, 200);
    const body = (await raw.json()) as { error: { code: number } };
    assert.equal(body.error.code, -32001, JSON.stringify(body));

    // Malformed requests are JSON-RPC errors of the request, never a server fault (-32603, HTTP 500).
    const rpc = async (body: unknown, version = '1.0') => {
      const res = await fetch(`${stack.url}/a2a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(version ? { 'a2a-version': version } : {}) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: { code: number; message: string } } };
    };
    const text = (value: string) => ({ text: value });
    const hostile: Array<[unknown, RegExp, string?]> = [
      [
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [text(' ')] } } },
        /text part/,
      ],
      [{ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'm2', role: 'ROLE_USER', parts: 'nope' } } }, /./],
      [{ jsonrpc: '2.0', id: 3, method: 'SendMessage', params: null }, /./],
      [{ jsonrpc: '2.0', id: 4, method: 'SendMessage', params: { message: { role: 'ROLE_USER', parts: [text('x')] } } }, /messageId/],
      [{ jsonrpc: '2.0', id: 5, method: 'Nope', params: {} }, /./],
      [{ jsonrpc: '2.0', id: 6, method: 'GetTask', params: { id: 5 } }, /./],
      [{ jsonrpc: '2.0', id: 7, method: 'CancelTask', params: {} }, /./],
      ['{not json', /./],
      [
        {
          jsonrpc: '2.0',
          id: 8,
          method: 'message/send',
          params: { message: { kind: 'message', messageId: 'm8', role: 'user', parts: [{ kind: 'file', file: { uri: 'http://x/y' } }] } },
        },
        /only text parts/,
        '',
      ],
      [
        {
          jsonrpc: '2.0',
          id: 9,
          method: 'SendMessage',
          params: { message: { messageId: 'm9', role: 'ROLE_USER', parts: [text('x')], metadata: { skill: 7 } } },
        },
        /metadata\.skill/,
      ],
    ];
    for (const [request, says, version] of hostile) {
      const answer = await rpc(request, version);
      assert.equal(answer.status, 200, JSON.stringify([request, answer]));
      assert.ok(answer.body.error && answer.body.error.code !== -32603, JSON.stringify([request, answer]));
      assert.match(answer.body.error.message, says, JSON.stringify([request, answer]));
    }
  });
});
