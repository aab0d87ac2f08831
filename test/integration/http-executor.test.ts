import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { toAppDefinition, type HttpToolDefinition } from '../../tools/app-definition.ts';
import { createAppManifestSchema, createInputSchemaCompiler, createToolSchema } from '../../tools/app-schema.ts';
import { executeHttpTool, ToolTransportError } from '../../tools/http-executor.ts';

type Seen = { path: string; method: string; headers: IncomingHttpHeaders; body: string };

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let onHang: ((request: { closed: Promise<void> }) => void) | undefined;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      if (req.url === '/ok')
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: JSON.parse(body) }));
      if (req.url === '/text') return res.writeHead(200, { 'content-type': 'text/plain' }).end('sunny, 21 °C');
      if (req.url === '/fail') return res.writeHead(503).end(`overloaded ${'x'.repeat(1000)}`);
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 1_500);
      // /hang never answers; the test learns when the client gives up on it.
      onHang?.({ closed: new Promise((resolve) => res.on('close', () => resolve())) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen = [];
  onHang = undefined;
});

/** A tool POSTing to `${BASE}<path>`, built through the real app.yml schema. */
function makeTool(path: string, overrides: Partial<HttpToolDefinition> = {}, headers: Record<string, string> = {}): HttpToolDefinition {
  const manifest = createAppManifestSchema().parse({
    id: 'weather',
    name: 'Weather',
    description: 'Test.',
    providers: ['Brave'],
    tools: [
      {
        name: 'get_forecast',
        description: 'Forecast.',
        input_schema: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] },
        http: { url: `\${BASE}${path}`, headers },
      },
    ],
  });
  const toolSchema = createToolSchema(createInputSchemaCompiler(), manifest.providers);
  const tool = toAppDefinition(manifest, [toolSchema.parse(manifest.tools?.[0])], []).tools[0];
  assert.ok(tool?.http);
  return { ...tool, http: tool.http, ...overrides };
}

const call = (tool: HttpToolDefinition, input: unknown, opts: Parameters<typeof executeHttpTool>[2] = {}) =>
  executeHttpTool(tool, input, { ...opts, env: { BASE: baseUrl, ...opts.env } });

describe('executeHttpTool', () => {
  it('POSTs the JSON input and returns the JSON response', async () => {
    const outcome = await call(makeTool('/ok'), { place: 'Lisbon' });
    assert.deepEqual(outcome, { ok: true, result: { got: { place: 'Lisbon' } } });
    assert.equal(seen[0]?.method, 'POST');
    assert.equal(seen[0]?.headers['content-type'], 'application/json');
  });

  it('returns a non-JSON response as text', async () => {
    assert.deepEqual(await call(makeTool('/text'), { place: 'Lisbon' }), { ok: true, result: 'sunny, 21 °C' });
  });

  it('turns a non-2xx answer into an error with the status and an excerpt of the body', async () => {
    const outcome = await call(makeTool('/fail'), { place: 'Lisbon' });
    assert.ok(!outcome.ok);
    assert.equal(outcome.status, 503);
    assert.ok(outcome.error.startsWith('HTTP 503: overloaded xxx'), outcome.error);
    assert.equal(outcome.error.length, 'HTTP 503: '.length + 300);
  });

  it('rejects input that does not match the schema without calling the server', async () => {
    const outcome = await call(makeTool('/ok'), { place: 42 });
    assert.ok(!outcome.ok);
    assert.match(outcome.error, /^input does not match the tool schema: \/place must be string/);
    assert.equal(seen.length, 0);
  });

  it('fills header secrets from the environment at call time', async () => {
    const tool = makeTool('/ok', {}, { Authorization: 'Bearer ${API_TOKEN}' });
    await call(tool, { place: 'Lisbon' }, { env: { API_TOKEN: 's3cret' } });
    assert.equal(seen[0]?.headers.authorization, 'Bearer s3cret');
  });

  it('fails on a missing secret, naming it, without calling the server', async () => {
    const tool = makeTool('/ok', {}, { Authorization: 'Bearer ${API_TOKEN}' });
    assert.deepEqual(await call(tool, { place: 'Lisbon' }), { ok: false, error: 'missing secret API_TOKEN' });
    assert.deepEqual(await executeHttpTool(tool, { place: 'Lisbon' }, { env: {} }), { ok: false, error: 'missing secret BASE' });
    assert.equal(seen.length, 0);
  });

  it('fills ${provider.<id>} from the keys resolved for the call, and redacts a key the server echoes', async () => {
    const tool = makeTool('/ok', {}, { Authorization: 'Bearer ${provider.brave}' });
    const key = 'brv-0123456789';
    const outcome = await executeHttpTool(tool, { place: key }, { env: { BASE: baseUrl }, providerKeys: new Map([['brave', key]]) });
    assert.equal(seen[0]?.headers.authorization, `Bearer ${key}`);
    // /ok echoes the input, which here holds the key: the result the model sees must not.
    assert.deepEqual(outcome, { ok: true, result: { got: { place: '[redacted]' } } });
    assert.deepEqual(await call(tool, { place: 'Lisbon' }), { ok: false, error: 'missing secret key of provider brave' });
  });

  it('refuses a filled header value the runtime rejects without quoting it', async () => {
    const tool = makeTool('/ok', {}, { Authorization: 'Bearer ${provider.brave}' });
    const outcome = await executeHttpTool(
      tool,
      { place: 'x' },
      { env: { BASE: baseUrl }, providerKeys: new Map([['brave', 'a\r\nb-key']]) },
    );
    assert.deepEqual(outcome, { ok: false, error: 'header Authorization is not a valid header value once filled' });
  });

  it('sends the Idempotency-Key header when given one', async () => {
    await call(makeTool('/ok'), { place: 'Lisbon' }, { idempotencyKey: 'mission-1/toolu_1' });
    assert.equal(seen[0]?.headers['idempotency-key'], 'mission-1/toolu_1');
  });

  it('rethrows the caller’s abort reason and closes the request', { timeout: 10_000 }, async () => {
    const arrived = new Promise<{ closed: Promise<void> }>((resolve) => (onHang = resolve));
    const controller = new AbortController();
    const pending = call(makeTool('/hang'), { place: 'Lisbon' }, { signal: controller.signal });
    const request = await arrived;
    const reason = new Error('tool call cancelled');
    controller.abort(reason);
    await assert.rejects(pending, (err) => err === reason);
    await request.closed;
  });

  it('throws at once for an already-aborted signal without calling the server', async () => {
    const reason = new Error('already cancelled');
    await assert.rejects(call(makeTool('/ok'), { place: 'Lisbon' }, { signal: AbortSignal.abort(reason) }), (err) => err === reason);
    assert.equal(seen.length, 0);
  });

  it('reports its own timeout as an error outcome', { timeout: 10_000 }, async () => {
    const outcome = await call(makeTool('/hang', { timeoutS: 0.2 }), { place: 'Lisbon' });
    assert.deepEqual(outcome, { ok: false, error: 'timed out after 0.2s' });
  });

  it('waits as long as the tool allows, not as long as the process-wide fetch would', { timeout: 10_000 }, async () => {
    // fetch's default dispatcher gives up after 300 s without response headers, though a tool may allow 600 s. Here the
    // process-wide one gives up after 0.5 s: a tool allowed 5 s still gets its 1.5 s answer.
    const before = getGlobalDispatcher();
    const impatient = new Agent({ headersTimeout: 500 });
    setGlobalDispatcher(impatient);
    try {
      await assert.rejects(fetch(`${baseUrl}/slow`, { method: 'POST' }), 'the process-wide fetch gives up early');
      assert.deepEqual(await call(makeTool('/slow', { timeoutS: 5 }), { place: 'Lisbon' }), { ok: true, result: 'late' });
    } finally {
      setGlobalDispatcher(before);
      await impatient.close();
    }
  });

  it('throws ToolTransportError when the connection is refused', async () => {
    const closedServer = createServer();
    await new Promise<void>((resolve) => closedServer.listen(0, '127.0.0.1', resolve));
    const port = (closedServer.address() as AddressInfo).port;
    await new Promise((resolve) => closedServer.close(resolve));
    const pending = executeHttpTool(makeTool('/ok'), { place: 'Lisbon' }, { env: { BASE: `http://127.0.0.1:${port}` } });
    await assert.rejects(pending, (err) => err instanceof ToolTransportError && /ECONNREFUSED/.test(err.message));
  });
});
