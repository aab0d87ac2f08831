import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readMcpListings } from '../../db/mcp-listings.ts';
import { loadAppRegistry } from '../../tools/app-registry.ts';
import { readStoredMcpListings } from '../../tools/mcp/mcp-load.ts';
import type { LiveEvent, LivePublisher } from '../../contracts/events.ts';
import { EVERYTHING_SERVER, readRecord, RECORD_STDIO, SILENT_SERVER, stdioApp, writeApps } from '../../testkit/mcp-servers.ts';
import { LAB_APPS_DIR, skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

/** MCP tools end to end: the worker lists the servers at start, missions call them through the API, cancels reach them. */
describe('MCP tools in missions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-mcp-mission-'));
  const appsDir = join(dir, 'apps');
  const record = join(dir, 'everything.record');
  const live: Array<{ missionId: string; event: LiveEvent }> = [];
  const recorder: LivePublisher = { publish: (missionId, event) => live.push({ missionId, event }) };
  let stack: TestStack;
  let key: string;

  before(async () => {
    mkdirSync(join(appsDir, 'lab'), { recursive: true });
    copyFileSync(join(LAB_APPS_DIR, 'lab', 'app.yml'), join(appsDir, 'lab', 'app.yml'));
    writeApps(appsDir, {
      everything: stdioApp(
        'everything',
        [RECORD_STDIO, process.execPath, EVERYTHING_SERVER, 'stdio'],
        [`env: {MCP_RECORD_FILE: ${JSON.stringify(record)}}`, 'timeout_s: 60'],
      ),
      silent: stdioApp('silent', SILENT_SERVER, ['list_timeout_s: 1']),
    });
    stack = await startTestStack({ env: { APPS_DIR: appsDir }, live: recorder });
    key = await stack.api.newKey();
    await stack.api.createSkill(
      key,
      skillMd({ name: 'mixer', tools: ['lab.lookup', 'everything.echo', 'everything.trigger_long_running_operation'], maxTurns: 3 }),
    );
  });
  after(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the servers at worker start: their tools in the catalogue, a server that never answers skipped with its reason', async () => {
    const admin = await stack.api.request('GET', '/api/v1/apps', { key: stack.config.adminKey! });
    assert.equal(admin.status, 200);
    const everything = admin.body.items.find((a: { id: string }) => a.id === 'everything');
    assert.equal(everything.mcp.transport, 'stdio');
    const echo = everything.tools.find((t: { name: string }) => t.name === 'echo');
    assert.deepEqual(
      { qualifiedName: echo.qualifiedName, description: echo.description, executor: echo.executor, required: echo.inputSchema.required },
      { qualifiedName: 'everything.echo', description: 'Echoes back the input string', executor: 'mcp', required: ['message'] },
    );
    const silent = admin.body.failed.find((f: { appId: string }) => f.appId === 'silent');
    assert.match(silent.error, /could not be listed: the server did not answer start within 1s/);
    assert.ok(
      admin.body.items.some((a: { id: string }) => a.id === 'lab'),
      'the other apps load',
    );

    const user = await stack.api.request('GET', '/api/v1/apps/everything', { key });
    assert.equal(user.status, 200);
    assert.equal(user.body.tools.find((t: { name: string }) => t.name === 'echo').available, true);
  });

  it('stores the listing so a process that starts no server (the API) knows the same tools', async () => {
    const [row] = await readMcpListings(stack.db, ['everything']);
    assert.ok(row && row.error === null && row.tools.length > 5);
    const apiRegistry = await loadAppRegistry(appsDir);
    assert.equal(apiRegistry.getTool('everything.echo'), undefined, 'nothing before the listing is read');
    await readStoredMcpListings(stack.db, apiRegistry);
    assert.equal(apiRegistry.getTool('everything.echo')?.mcp?.tool, 'echo');
    assert.match(apiRegistry.loadError('silent.anything') ?? '', /did not answer start within 1s/);
  });

  it('runs an MCP tool and an HTTP tool in one turn and feeds both results back', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'from http' } }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_http', name: 'lab__lookup', input: { q: 'x' } },
            { id: 'tu_mcp', name: 'everything__echo', input: { message: 'from mcp' } },
          ],
        },
      },
      { reply: { text: 'Both answered.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'mixer', objective: 'Ask both tools.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.deepEqual(
      mission.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]),
      [
        ['tu_http', 'completed'],
        ['tu_mcp', 'completed'],
      ],
    );
    const results = stack.model.requests.at(-1)!.toolResults;
    assert.deepEqual(
      results.map((r) => [r.toolUseId, r.isError ?? false]),
      [
        ['tu_http', false],
        ['tu_mcp', false],
      ],
    );
    assert.match(results[0]!.content, /from http/);
    assert.match(results[1]!.content, /Echo: from mcp/);
  });

  it('cancels a long-running MCP call through the API: progress reached the live channel and the server got notifications/cancelled', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_long', name: 'everything__trigger_long_running_operation', input: { duration: 40, steps: 80 } }] } },
      { reply: { text: 'Stopped the long job.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'mixer', objective: 'Start the long job.' });
    const progressOf = () => live.filter((l) => l.missionId === id && l.event.type === 'tool_progress');
    await until(() => progressOf().length >= 2, { what: 'two progress reports', timeoutMs: 30_000 });
    assert.deepEqual(progressOf()[0]!.event, { type: 'tool_progress', toolUseId: 'tu_long', progress: 1, total: 80 });

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_long/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'cancelled');
    const result = stack.model.requests.at(-1)!.toolResults[0]!;
    assert.ok(result.isError && /cancelled/.test(result.content), 'the model sees the call cancelled');

    const request = readRecord(record).findLast((r) => r.dir === 'in' && r.message.params?.name === 'trigger-long-running-operation')!;
    await until(
      () =>
        readRecord(record).some(
          (r) => r.message.method === 'notifications/cancelled' && r.message.params?.requestId === request.message.id,
        ),
      {
        what: 'the server to receive notifications/cancelled for the call',
      },
    );
  });

  it('cancelling the mission cancels its running MCP call on the server too', async () => {
    stack.model.enqueue({
      reply: { toolUses: [{ id: 'tu_whole', name: 'everything__trigger_long_running_operation', input: { duration: 40, steps: 80 } }] },
    });
    const { id } = await stack.api.startMission(key, { skill: 'mixer', objective: 'Start and abandon the long job.' });
    await until(() => live.some((l) => l.missionId === id && l.event.type === 'tool_progress'), { what: 'progress', timeoutMs: 30_000 });
    const request = readRecord(record).findLast((r) => r.dir === 'in' && r.message.params?.name === 'trigger-long-running-operation')!;
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'cancelled');
    assert.equal(mission.tools[0].status, 'cancelled');
    await until(
      () =>
        readRecord(record).some(
          (r) => r.message.method === 'notifications/cancelled' && r.message.params?.requestId === request.message.id,
        ),
      {
        what: 'the server to receive notifications/cancelled for the call',
      },
    );
  });
});
