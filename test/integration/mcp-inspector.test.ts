import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { mcpdoSession, runInspector } from '../helpers/mcp-inspector.ts';

/** Cadenza's `/mcp` driven by the MCP Inspector's command-line mode (`mcp-inspector --cli`), a process per call. */
describe('the MCP Inspector CLI against /mcp', () => {
  let stack: TestStack;
  let key: string;
  let mcp: string;
  before(async () => {
    stack = await startTestStack();
    mcp = `${stack.url}/mcp`;
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], { tenantId: 'acme', userId: 'mia' });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 3 }));
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    await stack.api.createSkill(ned, skillMd({ name: 'secret-skill' }));
  });
  after(() => stack?.stop());

  it('tools/list shows the caller’s skill and not someone else’s', async () => {
    const run = await runInspector(mcp, key, ['--method', 'tools/list']).done;
    assert.equal(run.code, 0, run.stderr);
    const { tools } = run.json<{ tools: Array<{ name: string; inputSchema: { required: string[] } }> }>();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['scanner'],
    );
    assert.deepEqual(tools[0]!.inputSchema.required, ['objective']);
  });

  it('tools/call runs a mission: the answer’s text and the mission’s id, the same mission REST shows', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'found it' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_insp', name: 'lab__lookup', input: { q: 'q' } }] } },
      { reply: { text: 'Found it through the Inspector.' } },
    );
    const run = await runInspector(mcp, key, ['--method', 'tools/call', '--tool-name', 'scanner', '--tool-arg', 'objective=Look it up.'])
      .done;
    assert.equal(run.code, 0, run.stderr);
    const result = run.json<{
      isError: boolean;
      content: Array<{ text?: string; uri?: string }>;
      structuredContent: { missionId: string; status: string };
    }>();
    assert.equal(result.isError, false, run.stdout);
    assert.equal(result.content[0]!.text, 'Found it through the Inspector.');
    const { missionId, status } = result.structuredContent;
    assert.equal(status, 'completed');
    assert.equal(result.content[1]!.uri, `cadenza://missions/${missionId}`);
    const mission = await stack.api.getMission(key, missionId);
    assert.equal(mission.body.objective, 'Look it up.');
    assert.equal(mission.body.result.text, 'Found it through the Inspector.');
  });

  it('calling someone else’s skill is the tool’s error, and their mission is no resource of mine', async () => {
    const call = await runInspector(mcp, key, ['--method', 'tools/call', '--tool-name', 'secret-skill', '--tool-arg', 'objective=x']).done;
    assert.notEqual(call.code, 0, 'no such tool for this caller');
    assert.match(call.stdout + call.stderr, /secret-skill/);
    const ned = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ned' });
    const { id } = await stack.api.startMission(ned, { skill: 'secret-skill', objective: 'Mine.' });
    const read = await runInspector(mcp, key, ['--method', 'resources/read', '--uri', `cadenza://missions/${id}`]).done;
    assert.notEqual(read.code, 0);
    assert.match(read.stdout + read.stderr, /resource not found/);
    // Ned's mission answers (the model's default reply) before the next test queues its replies.
    await until(async () => (await stack.api.getMission(ned, id)).body.status === 'completed', {
      timeoutMs: 30_000,
      what: 'ned’s mission',
    });
  });

  it('a bad key is refused with 401 before any session, and the Inspector says so', async () => {
    const run = await runInspector(mcp, 'cdz_not-a-key', ['--method', 'tools/list']).done;
    assert.notEqual(run.code, 0);
    assert.doesNotMatch(run.stdout, /scanner/);
    // The Inspector reads the 401 as the protocol's "authorization required", with the reason the server gave.
    const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
    assert.equal(error.code, 'auth_required', run.stderr);
    assert.match(error.message, /unknown or revoked API key/);
  });

  it('the CLI cannot cancel a call: interrupted, it drops the connection, the mission goes on, and mcpdo cancels it as a task', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.setHandler(() => ({ reply: { toolUses: [{ name: 'lab__scan', input: { target: 'inspector' } }] } }));
    const mcpdo = mcpdoSession();
    try {
      const call = runInspector(mcp, key, ['--method', 'tools/call', '--tool-name', 'scanner', '--tool-arg', 'objective=Scan forever.']);
      await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.endedAt === undefined));
      const [mission] = (await stack.api.request('GET', '/api/v1/missions?limit=1', { key })).body.items as Array<{ id: string }>;
      // Ctrl-C: the one-shot CLI has no handler of its own for it, so it dies without a notifications/cancelled.
      call.signal('SIGINT');
      const interrupted = await call.done;
      assert.equal(interrupted.code, null, 'ended by the signal');
      await new Promise((ok) => setTimeout(ok, 1_000));
      assert.equal((await stack.api.getMission(key, mission!.id)).body.status, 'running', 'a mission outlives its caller');

      const connected = await mcpdo.run(['connect', mcp, '--transport', 'http', '--header', `Authorization: Bearer ${key}`]);
      assert.equal(connected.code, 0, connected.stderr);
      const listed = await mcpdo.run(['tasks/list']);
      const { tasks } = listed.json<{ tasks: Array<{ taskId: string; status: string }> }>();
      assert.equal(tasks.find((t) => t.taskId === mission!.id)?.status, 'working', listed.stdout);
      const cancelled = await mcpdo.run(['tasks/cancel', mission!.id]);
      assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
      assert.equal((await stack.api.getMission(key, mission!.id)).body.status, 'cancelled');
    } finally {
      stack.model.setHandler(undefined);
      await mcpdo.stop();
    }
  });

  it('mcpdo (the Inspector’s connection CLI) runs a call as a task: its id is the mission’s', async () => {
    stack.model.setHandler(() => ({ reply: { text: 'Done as a task.' } }));
    const mcpdo = mcpdoSession();
    try {
      const connected = await mcpdo.run(['connect', mcp, '--transport', 'http', '--header', `Authorization: Bearer ${key}`]);
      assert.equal(connected.code, 0, connected.stderr);
      const call = await mcpdo.run(['tools/call', 'scanner', '--tool-arg', 'objective=Answer as a task.', '--task']);
      assert.equal(call.code, 0, call.stderr);
      const result = call.json<{ _meta: Record<string, { taskId: string }>; content: Array<{ text: string }> }>();
      assert.equal(result.content[0]!.text, 'Done as a task.');
      const taskId = result._meta['io.modelcontextprotocol/related-task']!.taskId;
      const mission = await stack.api.getMission(key, taskId);
      assert.equal(mission.body.objective, 'Answer as a task.');
    } finally {
      stack.model.setHandler(undefined);
      await mcpdo.stop();
    }
  });
});
