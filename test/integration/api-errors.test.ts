import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { ApiResponse } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

/** The DESIGN error shape: JSON `{error:{code,message,details?}}` and nothing that looks like a stack trace. */
function assertErrorShape(res: ApiResponse, status: number, code: string): void {
  assert.equal(res.status, status, `status of ${JSON.stringify(res.body)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(typeof res.body, 'object', 'the body is JSON');
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, 'string');
  for (const key of Object.keys(res.body.error)) assert.ok(['code', 'message', 'details'].includes(key), `unexpected key ${key}`);
  const text = JSON.stringify(res.body);
  assert.doesNotMatch(text, /\bat [\w.<>]+ \(|node:internal|\.ts:\d+/, 'no stack trace');
  assert.doesNotMatch(text, /<html|<pre>/i, 'no HTML');
}

describe('HTTP edge: error shapes, request ids and health', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { BODY_LIMIT_KB: '1' } });
    key = await stack.api.newKey();
  });
  after(() => stack.stop());

  it('answers malformed JSON with 400 malformed_json', async () => {
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      raw: '{"skill": "x",',
      headers: { 'content-type': 'application/json' },
    });
    assertErrorShape(res, 400, 'malformed_json');
  });

  it('answers malformed JSON to the admin API with 400 malformed_json too', async () => {
    const res = await stack.api.request('POST', '/api/v1/admin/keys', {
      key: stack.config.adminKey!,
      raw: "{tenantId: 'a'}",
      headers: { 'content-type': 'application/json' },
    });
    assertErrorShape(res, 400, 'malformed_json');
  });

  it('answers a JSON body over BODY_LIMIT_KB with 413 payload_too_large', async () => {
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'x', objective: 'o'.repeat(2048), workspaceCode: 'ws' },
    });
    assertErrorShape(res, 413, 'payload_too_large');
  });

  it('answers a Markdown body over BODY_LIMIT_KB with 413 payload_too_large', async () => {
    const md = `---\nname: big\ndescription: Big.\n---\n${'word '.repeat(500)}\n`;
    const res = await stack.api.request('POST', '/api/v1/skills', { key, raw: md, headers: { 'content-type': 'text/markdown' } });
    assertErrorShape(res, 413, 'payload_too_large');
    const rows = await stack.db.selectFrom('skills').select('id').where('name', '=', 'big').execute();
    assert.deepEqual(rows, [], 'nothing was stored');
  });

  it('accepts a body just under the limit', async () => {
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'missing', objective: 'o'.repeat(800), workspaceCode: 'ws' },
    });
    assertErrorShape(res, 404, 'not_found');
  });

  for (const path of ['/nope', '/api/v1/nope', '/api/v2/missions', '/api/v1']) {
    it(`answers the unknown route GET ${path} with 404 JSON`, async () => {
      assertErrorShape(await stack.api.request('GET', path, { key }), 404, 'not_found');
    });
  }

  for (const [method, path] of [
    ['DELETE', '/api/v1/missions'],
    ['PUT', '/api/v1/skills'],
    ['PUT', '/api/v1/missions/some-id'],
    ['PUT', '/api/v1/admin/keys'],
    ['POST', '/healthz'],
  ] as const) {
    it(`answers the wrong method ${method} ${path} with a 404 or 405 JSON error`, async () => {
      const res = await stack.api.request(method, path, { key: path.includes('admin') ? stack.config.adminKey! : key });
      assert.ok(res.status === 404 || res.status === 405, `status ${res.status}`);
      assertErrorShape(res, res.status, res.status === 404 ? 'not_found' : 'method_not_allowed');
    });
  }

  it('answers a JSON body that is not an object with 400, not 500', async () => {
    for (const raw of ['[]', '"text"', 'null', '42']) {
      const res = await stack.api.request('POST', '/api/v1/missions', { key, raw, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, `body ${raw}`);
      assert.ok(['malformed_json', 'validation_failed'].includes(res.body.error.code), `body ${raw}: ${res.body.error.code}`);
    }
  });

  it('echoes a well-formed x-request-id', async () => {
    const res = await stack.api.request('GET', '/healthz', { headers: { 'x-request-id': 'req-abc.123' } });
    assert.equal(res.headers.get('x-request-id'), 'req-abc.123');
  });

  it('generates an x-request-id when none or an unsafe one is sent, also on errors', async () => {
    const plain = await stack.api.request('GET', '/api/v1/missions');
    const first = plain.headers.get('x-request-id');
    assert.ok(first && first.length > 0);
    const again = await stack.api.request('GET', '/api/v1/missions');
    assert.notEqual(again.headers.get('x-request-id'), first, 'a fresh id per request');
    const unsafe = await stack.api.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id <script>' } });
    const generated = unsafe.headers.get('x-request-id');
    assert.ok(generated && generated !== 'bad id <script>');
    assert.match(generated, /^[\w.-]+$/);
  });

  it('answers /healthz with 200', async () => {
    const res = await stack.api.request('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
  });

  it('answers /readyz with 200 when the database and Temporal are reachable and the namespace has the search attributes', async () => {
    const res = await stack.api.request('GET', '/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.checks, { database: true, temporal: true, searchAttributes: true });
  });
});

describe('HTTP edge: compressed bodies', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
  });
  after(() => stack.stop());

  const post = (body: Uint8Array, encoding: string) =>
    fetch(`${stack.url}/api/v1/missions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    }).then(async (res) => ({ status: res.status, body: JSON.parse(await res.text()), headers: res.headers }));

  it('reads a gzip-compressed JSON body', async () => {
    const res = await post(gzipSync(JSON.stringify({ skill: 'missing', objective: 'o', workspaceCode: 'ws' })), 'gzip');
    assertErrorShape(res, 404, 'not_found');
    assert.match(res.body.error.message, /missing/);
  });

  it('answers a corrupt gzip body with a 400, not a 500', async () => {
    const res = await post(new TextEncoder().encode('this is not gzip at all'), 'gzip');
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assertErrorShape(res, 400, res.body.error.code);
  });

  it('counts the limit on the inflated size: a small gzip of a huge body is 413', async () => {
    const huge = JSON.stringify({ skill: 'x', objective: ' '.repeat(2 * 1024 * 1024), workspaceCode: 'ws' });
    const packed = gzipSync(huge);
    assert.ok(packed.length < stack.config.bodyLimitBytes, 'the compressed body is under the limit');
    assertErrorShape(await post(packed, 'gzip'), 413, 'payload_too_large');
  });

  it('answers an unknown content-encoding with 415 unsupported_media_type', async () => {
    const res = await post(new TextEncoder().encode('{}'), 'x-squash');
    assertErrorShape(res, 415, 'unsupported_media_type');
  });
});

describe('HTTP edge: input Postgres cannot store or compare', () => {
  let stack: TestStack;
  let key: string;
  let skillId: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    skillId = (await stack.api.createSkill(key, '---\nname: plain\ndescription: Plain.\n---\nDo it.\n')).id;
  });
  after(() => stack.stop());

  const nulCases: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/missions/%00'],
    ['GET', '/api/v1/skills/%00'],
    ['DELETE', '/api/v1/memories/a%00b'],
    ['GET', '/api/v1/memories?q=a%00b'],
    ['GET', '/api/v1/skills/discover?q=a%00b'],
    ['GET', '/api/v1/activity?missionId=a%00b'],
    ['POST', '/api/v1/memories', { content: 'a\u0000b' }],
    ['POST', '/api/v1/missions', { skill: 'plain', objective: 'a\u0000b', workspaceCode: 'w' }],
    ['PUT', '/api/v1/profile', { preferences: { 'a\u0000b': 'x' } }],
    ['POST', '/api/v1/skills', { skillMd: '---\nname: nul\ndescription: N\u0000ul.\n---\nDo it.\n' }],
  ];
  for (const [method, path, body] of nulCases) {
    it(`answers a NUL character in ${method} ${path} ${body ? JSON.stringify(body) : ''} with 400, not 500`, async () => {
      const res = await stack.api.request(method, path, { key, ...(body !== undefined ? { body } : {}) });
      assertErrorShape(res, 400, 'validation_failed');
    });
  }

  it('answers a NUL character in a raw SKILL.md with 400 naming the body', async () => {
    const md = '---\nname: nul2\ndescription: Nul.\n---\nDo \u0000it.\n';
    const res = await stack.api.request('POST', '/api/v1/skills', { key, raw: md, headers: { 'content-type': 'text/markdown' } });
    assertErrorShape(res, 400, 'validation_failed');
    assert.deepEqual(res.body.error.details.fields, [{ field: 'body', message: 'must not contain the NUL character (U+0000)' }]);
  });

  it('answers a NUL character in a zipped SKILL.md with 400, not 500', async () => {
    const zip = buildZip([{ path: 'nul3/SKILL.md', data: '---\nname: nul3\ndescription: Nul.\n---\nDo \u0000it.\n' }]);
    const res = await fetch(`${stack.url}/api/v1/skills/import/zip`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: zip,
    });
    const body = await res.json();
    assertErrorShape({ status: res.status, body, headers: res.headers }, 400, 'validation_failed');
  });

  it('answers a skill version beyond the integer range with 400, not 500', async () => {
    for (const suffix of ['', '/export', '/bundle']) {
      const res = await stack.api.request('GET', `/api/v1/skills/${skillId}${suffix}?version=3000000000`, { key });
      assertErrorShape(res, 400, 'validation_failed');
    }
  });

  it('answers a sequence cursor beyond the bigint range with 400, not 500', async () => {
    const cursor = 's_9999999999999999999';
    for (const path of ['/api/v1/activity', '/api/v1/memories']) {
      assertErrorShape(await stack.api.request('GET', `${path}?cursor=${cursor}`, { key }), 400, 'validation_failed');
    }
  });
});
