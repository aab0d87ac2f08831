import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

/** Cadenza's MCP face, driven by the official SDK's client over Streamable HTTP against the real stack. */
describe('the MCP server at /mcp', () => {
  let stack: TestStack;
  let key: string;
  const clients: Client[] = [];
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], { tenantId: 'acme', userId: 'mia' });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 3 }));
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    await stack.api.createSkill(other, skillMd({ name: 'secret-skill' }));
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await stack?.stop();
  });

  const connect = async (withKey = key) => {
    const client = new Client({ name: 'cadenza-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${withKey}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  it('lists only the caller’s active skills as tools, each taking an objective', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['scanner'],
    );
    assert.equal(tools[0]!.description, 'Test skill scanner.');
    assert.deepEqual(tools[0]!.inputSchema.required, ['objective']);
  });

  it('tells a session its tool list changed when the caller’s skills change, and the new list has the skill', async () => {
    const client = await connect();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    // Another user's new skill is not this session's news; the caller's is.
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    await stack.api.createSkill(ned, skillMd({ name: 'neds-other' }));
    await new Promise((ok) => setTimeout(ok, 1_000));
    assert.equal(changed, 0, 'no notice for another user’s skill');
    await stack.api.createSkill(key, skillMd({ name: 'summarizer' }));
    await until(() => changed > 0, { timeoutMs: 10_000, what: 'notifications/tools/list_changed' });
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'summarizer'));
    assert.ok(!tools.some((t) => t.name === 'neds-other'));
  });

  it('a call runs a mission: progress while it runs, then its answer, its id and a link to it as a resource', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 300, body: { hit: 'found it' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_mcp', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'Found it over MCP.' } },
    );
    const client = await connect();
    const progress: string[] = [];
    const result = await client.callTool({ name: 'scanner', arguments: { objective: 'Look it up.' } }, undefined, {
      onprogress: (p) => void progress.push(String(p.message)),
    });
    assert.equal(result.isError, false);
    const content = result.content as Array<{ type: string; text?: string; uri?: string }>;
    assert.equal(content[0]!.text, 'Found it over MCP.');
    const structured = result.structuredContent as { missionId: string; status: string };
    assert.equal(structured.status, 'completed');
    assert.ok(
      progress.includes('turn 1') && progress.includes('lab.lookup started') && progress.includes('lab.lookup completed'),
      progress.join(' | '),
    );
    const mission = await stack.api.getMission(key, structured.missionId);
    assert.equal(mission.body.result.text, 'Found it over MCP.', 'the same mission the REST API shows');

    const read = await client.readResource({ uri: content[1]!.uri! });
    assert.equal(JSON.parse((read.contents[0] as { text: string }).text).id, structured.missionId);
  });

  it('a client’s cancel notification cancels the mission', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_hang', name: 'lab__scan', input: { target: 'mcp' } }] } });
    const client = await connect();
    const ac = new AbortController();
    const before = (await stack.api.request('GET', '/api/v1/missions?limit=1', { key })).body.items[0]?.id;
    const call = client.callTool({ name: 'scanner', arguments: { objective: 'Scan forever.' } }, undefined, { signal: ac.signal });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.endedAt === undefined));
    const [latest] = (await stack.api.request('GET', '/api/v1/missions?limit=1', { key })).body.items;
    assert.notEqual(latest.id, before);
    ac.abort('changed my mind');
    await assert.rejects(call);
    await until(async () => (await stack.api.getMission(key, latest.id)).body.status === 'cancelled', {
      timeoutMs: 30_000,
      what: 'the mission cancelled',
    });
  });

  it('cancelling a task cancels its mission', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_task_hang', name: 'lab__scan', input: { target: 'task' } }] } });
    const client = await connect();
    await client.listTools();
    let taskId = '';
    for await (const m of client.experimental.tasks.callToolStream({ name: 'scanner', arguments: { objective: 'Scan as a task.' } })) {
      if (m.type === 'taskCreated') taskId = m.task.taskId;
      break;
    }
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.endedAt === undefined));
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await stack.api.getMission(key, taskId)).body.status, 'cancelled');
    await assert.rejects(client.experimental.tasks.cancelTask(taskId), /already cancelled/);
  });

  it('a call may be a task: the task id is the mission id, polled to its result, listed, and another user’s is unknown', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 1_200, body: { hit: 'found it' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_task', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'Found it as a task.' } },
    );
    const client = await connect();
    const { tools } = await client.listTools();
    assert.equal(tools.find((t) => t.name === 'scanner')!.execution?.taskSupport, 'optional');
    const seen: string[] = [];
    let taskId = '';
    let text = '';
    for await (const m of client.experimental.tasks.callToolStream({ name: 'scanner', arguments: { objective: 'Look it up later.' } })) {
      seen.push(m.type === 'taskStatus' ? `status:${m.task.status}` : m.type);
      if (m.type === 'taskCreated') taskId = m.task.taskId;
      if (m.type === 'result') text = (m.result.content as Array<{ text: string }>)[0]!.text;
      if (m.type === 'error') throw m.error;
    }
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('status:working'), seen.join(' '));
    assert.deepEqual(seen.slice(-2), ['status:completed', 'result']);
    assert.equal(text, 'Found it as a task.');
    const mission = await stack.api.getMission(key, taskId);
    assert.equal(mission.body.objective, 'Look it up later.', 'the task is the mission REST shows');
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'completed');
    assert.ok((await client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId));

    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    const { id: nedsMission } = await stack.api.startMission(ned, { skill: 'secret-skill', objective: 'Mine.' });
    await assert.rejects(client.experimental.tasks.getTask(nedsMission), /task not found/);
    await assert.rejects(client.experimental.tasks.cancelTask(nedsMission), /task not found/);
  });

  it('someone else’s mission is not a resource, and a key without the capability cannot list or call', async () => {
    const client = await connect();
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    const { id } = await stack.api.startMission(ned, { skill: 'secret-skill', objective: 'Mine.' });
    await assert.rejects(
      client.readResource({ uri: `cadenza://missions/${id}` }),
      (err) => err instanceof McpError && /not found/.test(err.message),
    );
    const readOnly = await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'mia' });
    const limited = await connect(readOnly);
    await assert.rejects(limited.listTools(), /skill\.read/);
    await assert.rejects(limited.callTool({ name: 'scanner', arguments: { objective: 'x' } }), /mission\.run/);
  });

  it('answers 401 without a key, and a session is its user’s only', async () => {
    const res = await fetch(`${stack.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="cadenza"', 'an MCP host learns to send a bearer key');
    const client = await connect();
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    const stolen = await fetch(`${stack.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ned}`,
        'mcp-session-id': sessionId,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    assert.equal(stolen.status, 404, 'another user cannot use the session');
  });
});
