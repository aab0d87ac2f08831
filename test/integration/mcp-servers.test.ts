import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/logger.ts';
import type { McpToolDefinition } from '../../tools/app-definition.ts';
import { loadAppRegistry, type AppRegistry } from '../../tools/app-registry.ts';
import { createMcpPool, type McpApp, type McpPool, type McpProgress } from '../../tools/mcp/mcp-pool.ts';
import { alive } from '../helpers/processes.ts';
import {
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  readRecord,
  RECORD_STDIO,
  SILENT_SERVER,
  startEverythingHttp,
  stdioApp,
  writeApps,
} from '../../testkit/mcp-servers.ts';
import { until } from '../../testkit/until.ts';

/** The MCP client pool against the real reference servers from npm: listing, calls, cancellation, restarts. */
describe('MCP servers through the pool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-mcp-'));
  const appsDir = join(dir, 'apps');
  const files = join(dir, 'files');
  const record = join(dir, 'everything.record');
  let http: Awaited<ReturnType<typeof startEverythingHttp>>;
  let registry: AppRegistry;
  let pool: McpPool;
  const app = (id: string) => registry.mcpApps.find((a) => a.id === id) as McpApp;
  const tool = (name: string) => registry.getTool(name) as McpToolDefinition;
  const signal = () => new AbortController().signal;

  before(async () => {
    http = await startEverythingHttp();
    writeApps(appsDir, {
      everything: stdioApp(
        'everything',
        [RECORD_STDIO, process.execPath, EVERYTHING_SERVER, 'stdio'],
        [`env: {MCP_RECORD_FILE: ${JSON.stringify(record)}}`, 'timeout_s: 20'],
      ),
      files: stdioApp('files', [FILESYSTEM_SERVER, files], ['include: [read_text_file, list_directory, write_file]']),
      remote: [
        'id: remote',
        'name: Remote',
        'description: Everything over HTTP.',
        'mcp:',
        `  url: ${http.url}`,
        '  exclude: [simulate-research-query]',
        '',
      ].join('\n'),
      silent: stdioApp('silent', SILENT_SERVER, ['list_timeout_s: 1']),
      missing: [
        'id: missing',
        'name: Missing',
        'description: No such program.',
        'mcp:',
        `  command: [${JSON.stringify(join(dir, 'no-such-server'))}]`,
        '',
      ].join('\n'),
      crashing: stdioApp('crashing', ['-e', 'console.error("bad config: no token"); process.exit(3)']),
    });
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'notes.txt'), 'MCP works.\n');
    registry = await loadAppRegistry(appsDir);
    pool = createMcpPool({ env: process.env, logger: createLogger({ level: 'error' }) });
    for (const id of ['everything', 'files', 'remote']) {
      registry.applyMcpListing({ appId: id, listedAt: new Date(), ok: true, tools: await pool.list(app(id)) });
    }
  });
  after(async () => {
    await pool.close();
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a stdio and a Streamable HTTP server: each tool becomes <app-id>.<tool> with its description and schema', () => {
    const echo = tool('everything.echo');
    assert.equal(echo.description, 'Echoes back the input string');
    assert.deepEqual(echo.inputSchema.required, ['message']);
    assert.deepEqual(echo.mcp, { tool: 'echo' });
    const long = tool('everything.trigger_long_running_operation');
    assert.equal(long.mcp.tool, 'trigger-long-running-operation', 'the server name is kept for the call');
    assert.ok(tool('remote.echo'), 'the HTTP server is listed too');
    assert.equal(registry.getTool('remote.simulate_research_query'), undefined, 'exclude drops a tool');
    assert.deepEqual(
      registry
        .getApp('files')!
        .tools.map((t) => t.name)
        .sort(),
      ['list_directory', 'read_text_file', 'write_file'],
      'include keeps only the named tools',
    );
  });

  it('calls a tool and returns its text; a filesystem read returns the file', async () => {
    assert.deepEqual(await pool.call(app('everything'), tool('everything.echo'), { message: 'hi' }, { signal: signal() }), {
      ok: true,
      result: 'Echo: hi',
    });
    assert.deepEqual(await pool.call(app('remote'), tool('remote.echo'), { message: 'over http' }, { signal: signal() }), {
      ok: true,
      result: 'Echo: over http',
    });
    const read = await pool.call(app('files'), tool('files.read_text_file'), { path: join(files, 'notes.txt') }, { signal: signal() });
    assert.deepEqual(read, { ok: true, result: { content: 'MCP works.\n' } }, 'its structured content');
  });

  it('maps isError to an error result, and refuses input that does not match the schema before calling', async () => {
    const missing = await pool.call(app('files'), tool('files.read_text_file'), { path: join(files, 'nope.txt') }, { signal: signal() });
    assert.equal(missing.ok, false);
    assert.match(!missing.ok ? missing.error : '', /ENOENT|no such file/i);
    const outside = await pool.call(app('files'), tool('files.read_text_file'), { path: '/etc/passwd' }, { signal: signal() });
    assert.equal(outside.ok, false, 'the server refuses a path outside its folder');
    const bad = await pool.call(app('everything'), tool('everything.echo'), { text: 'no message' }, { signal: signal() });
    assert.deepEqual(bad.ok, false);
    assert.match(!bad.ok ? bad.error : '', /must have required property 'message'/);
  });

  it('returns structured content as the result and summarises an image instead of dumping it', async () => {
    const weather = await pool.call(
      app('everything'),
      tool('everything.get_structured_content'),
      { location: 'Chicago' },
      { signal: signal() },
    );
    assert.ok(weather.ok);
    assert.deepEqual(Object.keys(weather.result as object).sort(), ['conditions', 'humidity', 'temperature']);
    const image = await pool.call(app('everything'), tool('everything.get_tiny_image'), {}, { signal: signal() });
    assert.ok(image.ok && typeof image.result === 'string');
    assert.match(image.result as string, /\[image image\/png, [\d.]+ KB\]/);
    assert.ok((image.result as string).length < 300, 'no base64 in what the model sees');
  });

  it('reports the server’s progress notifications', async () => {
    const seen: McpProgress[] = [];
    const done = await pool.call(
      app('everything'),
      tool('everything.trigger_long_running_operation'),
      { duration: 0.6, steps: 3 },
      { signal: signal(), onProgress: (p) => seen.push(p) },
    );
    assert.ok(done.ok);
    // The last report races with the result (the SDK drops a request's progress handler once it is answered).
    assert.deepEqual(seen.slice(0, 2), [
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
  });

  it('cancels a long-running call on the server: it receives notifications/cancelled and never answers the request', async () => {
    const abort = new AbortController();
    const progress: McpProgress[] = [];
    const call = pool.call(
      app('everything'),
      tool('everything.trigger_long_running_operation'),
      { duration: 2, steps: 4 },
      { signal: abort.signal, onProgress: (p) => progress.push(p) },
    );
    await until(() => progress.length > 0, { what: 'the first progress report' });
    abort.abort(new Error('cancelled by the test'));
    await assert.rejects(call, /cancelled by the test/);

    const request = readRecord(record).findLast((r) => r.dir === 'in' && r.message.params?.name === 'trigger-long-running-operation')!;
    await until(() => readRecord(record).some((r) => r.dir === 'in' && r.message.method === 'notifications/cancelled'), {
      what: 'the server to receive the cancellation',
    });
    const cancelled = readRecord(record).find((r) => r.dir === 'in' && r.message.method === 'notifications/cancelled')!;
    assert.equal(cancelled.message.params?.requestId, request.message.id);
    // A second run as long as the first, started after the cancel: when it ends, the first would have ended too.
    assert.ok(
      (
        await pool.call(
          app('everything'),
          tool('everything.trigger_long_running_operation'),
          { duration: 2, steps: 1 },
          { signal: signal() },
        )
      ).ok,
    );
    const answers = readRecord(record).filter((r) => r.dir === 'out' && r.message.id === request.message.id && 'result' in r.message);
    assert.deepEqual(answers, [], 'the server dropped the cancelled request');
  });

  it('starts a server again when it died between calls', async () => {
    const files_ = app('files');
    const { pid, starts } = pool.status('files');
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await until(() => !pool.status('files').connected && !alive(pid), { what: 'the pool to see the server gone' });
    const read = await pool.call(files_, tool('files.list_directory'), { path: files }, { signal: signal() });
    assert.ok(read.ok);
    assert.match(JSON.stringify(read.result), /notes\.txt/);
    assert.equal(pool.status('files').starts, starts + 1);
    assert.notEqual(pool.status('files').pid, pid);
  });

  it('gives up on a server that never answers, within its list_timeout_s, naming why', async () => {
    const started = Date.now();
    await assert.rejects(pool.list(app('silent')), /did not answer start within 1s/);
    assert.ok(Date.now() - started < 5_000);
    assert.equal(pool.status('silent').connected, false);
  });

  it('names why a server fails to start: a missing program, or one that exits (with its last stderr lines)', async () => {
    await assert.rejects(pool.list(app('missing')), /start failed: spawn \S+no-such-server ENOENT/);
    await assert.rejects(pool.list(app('crashing')), /closed the connection during start \(stderr: bad config: no token\)/);
  });
});
