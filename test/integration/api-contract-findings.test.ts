import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { ApiResponse } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

function assertError(res: ApiResponse, status: number, code: string): void {
  assert.equal(res.status, status, `status of ${JSON.stringify(res.body).slice(0, 300)}`);
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body).slice(0, 300));
}

/** A raw request (fetch refuses some of what a client may send): status, headers and the parsed JSON body. */
function rawRequest(url: string, method: string, headers: Record<string, string> = {}, agent: Agent | false = false) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: ApiResponse['body'] }>((ok, fail) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', fail);
    req.end();
  });
}

// What a property-based run of Schemathesis over the served document found (issue 27, item 10), one test each.
describe('HTTP contract: what the document promises', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
  });
  after(() => stack?.stop());

  it('refuses a PUT /profile without a body with 400 naming the body, and keeps the saved profile', async () => {
    const saved = await stack.api.request('PUT', '/api/v1/profile', { key, body: { company: 'Acme', role: 'CTO' } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const empty = await stack.api.request('PUT', '/api/v1/profile', { key });
    assertError(empty, 400, 'validation_failed');
    assert.match(empty.body.error.message, /request body is required/);
    assert.deepEqual(empty.body.error.details.fields, [{ field: 'body', message: 'required' }]);
    const after = await stack.api.request('GET', '/api/v1/profile', { key });
    assert.equal(after.body.company, 'Acme');
    assert.equal(after.body.role, 'CTO');
  });

  it('still takes a POST whose body is optional without one (a retry, a promotion)', async () => {
    const retry = await stack.api.request('POST', '/api/v1/missions/00000000-0000-0000-0000-000000000000/retry', { key });
    assertError(retry, 404, 'not_found');
  });

  for (const [path, allow] of [
    ['/api/v1/skills', 'GET, HEAD, POST'],
    ['/api/v1/skills/import', 'POST'],
    ['/api/v1/profile', 'GET, HEAD, PUT'],
    ['/api/v1/missions/00000000-0000-0000-0000-000000000000/cancel', 'POST'],
    ['/api/v1/secrets/weather', 'DELETE, GET, HEAD, PUT'],
  ] as const) {
    it(`answers OPTIONS ${path} with every allowed method: ${allow}`, async () => {
      const res = await fetch(`${stack.url}${path}`, { method: 'OPTIONS' });
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('allow'), allow);
    });
  }

  it('answers OPTIONS on a path that is no route with 404', async () => {
    const res = await stack.api.request('OPTIONS', '/api/v1/nothing-here', { key });
    assertError(res, 404, 'not_found');
  });

  it('answers a GET that its route passes on (a missing vendored file) with 404, not 405', async () => {
    const res = await stack.api.request('GET', '/vendor/no-such-file.js');
    assertError(res, 404, 'not_found');
  });

  it('answers a request line too long for the server with a JSON 431', async () => {
    const res = await rawRequest(`${stack.url}/api/v1/skills?q=${'x'.repeat(20_000)}`, 'GET', { authorization: `Bearer ${key}` });
    assert.equal(res.status, 431);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.equal(res.body.error.code, 'headers_too_large');
    assert.match(res.body.error.message, /request line and headers are over the server's limit/);
  });

  it('answers the JSON 431 on a kept-alive connection that already carried a response', async () => {
    // A client's pooled connection: the first request is answered, the second is too long for the parser.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const headers = { authorization: `Bearer ${key}` };
      assert.equal((await rawRequest(`${stack.url}/api/v1/skills`, 'GET', headers, agent)).status, 200);
      const res = await rawRequest(`${stack.url}/api/v1/skills?q=${'x'.repeat(20_000)}`, 'GET', headers, agent);
      assert.equal(res.status, 431);
      assert.equal(res.body.error.code, 'headers_too_large');
    } finally {
      agent.destroy();
    }
  });

  for (const [query, field] of [
    ['q=hello&limit=21', 'limit'],
    ['q=hello&limit=0', 'limit'],
    ['q=hello&limit=1.5', 'limit'],
    ['q=hello&limit=0x5', 'limit'],
    ['q=hello&limit=%205', 'limit'],
    [`q=${'a'.repeat(4001)}`, 'q'],
    [`q=${'a'.repeat(3999)}${'%20'.repeat(5)}`, 'q'],
    ['q=%20%20', 'q'],
  ] as const) {
    it(`refuses GET /skills/discover?${query.slice(0, 40)} with 400 naming ${field}`, async () => {
      const res = await stack.api.request('GET', `/api/v1/skills/discover?${query}`, { key });
      assertError(res, 400, 'validation_failed');
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        [field],
      );
    });
  }

  it('takes GET /skills/discover with a limit in range and q at the limit', async () => {
    const res = await stack.api.request('GET', `/api/v1/skills/discover?q=${'a'.repeat(4000)}&limit=20`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
  });
});
