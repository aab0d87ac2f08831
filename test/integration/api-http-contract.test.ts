import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { RETRY_AFTER_SECONDS } from '../../server/errors.ts';
import type { ApiResponse } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

/** Every route that reads a JSON body, with a body it would take (the deep-JSON checks send each one instead). */
const JSON_ROUTES: Array<[string, string]> = [
  ['POST', '/api/v1/admin/keys'],
  ['POST', '/api/v1/missions'],
  ['POST', '/api/v1/missions/00000000-0000-0000-0000-000000000000/cancel'],
  ['POST', '/api/v1/skills'],
  ['POST', '/api/v1/skills/import'],
  ['POST', '/api/v1/skills/some-id/versions'],
  ['POST', '/api/v1/skills/some-id/activate'],
  ['PUT', '/api/v1/profile'],
  ['POST', '/api/v1/memories'],
  ['POST', '/api/v1/integrations'],
];

function assertError(res: ApiResponse, status: number, code: string): void {
  assert.equal(res.status, status, `status of ${JSON.stringify(res.body).slice(0, 300)}`);
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body).slice(0, 300));
}

describe('HTTP contract: content types, nesting depth, limits and methods', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({
      worker: false,
      env: { BODY_LIMIT_KB: '512', SKILL_BUNDLE_MAX_TOTAL_KB: '16', SKILL_BUNDLE_MAX_FILES: '4' },
    });
    key = await stack.api.newKey();
  });
  after(() => stack.stop());

  const keyFor = (path: string) => (path.includes('/admin/') ? stack.config.adminKey! : key);
  const send = (method: string, path: string, raw: string | Uint8Array, contentType?: string) =>
    fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${keyFor(path)}`, ...(contentType ? { 'content-type': contentType } : {}) },
      body: raw,
    }).then(async (res) => {
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: JSON.parse(text), size: text.length };
    });

  it('answers a form-urlencoded mission start (curl -d) with 415 naming application/json', async () => {
    const res = await send('POST', '/api/v1/missions', 'skill=x&objective=y&workspaceCode=w', 'application/x-www-form-urlencoded');
    assertError(res, 415, 'unsupported_media_type');
    assert.match(res.body.error.message, /application\/x-www-form-urlencoded is not accepted here: send application\/json/);
    assert.deepEqual(res.body.error.details, { accepts: ['application/json'] });
    assert.doesNotMatch(JSON.stringify(res.body), /undefined/);
  });

  it('answers JSON sent as text/plain with a short 415, not a list of Buffer methods', async () => {
    const res = await send('POST', '/api/v1/missions', JSON.stringify({ skill: 'x', objective: 'y', workspaceCode: 'w' }), 'text/plain');
    assertError(res, 415, 'unsupported_media_type');
    assert.ok(res.size < 300, `a short answer (${res.size} bytes)`);
    assert.doesNotMatch(JSON.stringify(res.body), /readUInt|toJSON|buffer/i);
  });

  it('answers a body without a content-type with 415', async () => {
    const res = await send('PUT', '/api/v1/profile', new TextEncoder().encode('{"company":"Acme"}'));
    assertError(res, 415, 'unsupported_media_type');
    assert.match(res.body.error.message, /without a content-type: send application\/json/);
  });

  for (const [method, path] of [
    ['POST', '/api/v1/memories'],
    ['PUT', '/api/v1/profile'],
    ['POST', '/api/v1/admin/keys'],
  ] as const) {
    it(`answers Markdown sent to the JSON route ${method} ${path} with 415`, async () => {
      assertError(await send(method, path, '# hello', 'text/markdown'), 415, 'unsupported_media_type');
    });
  }

  it('names JSON, Markdown and zip where skills are uploaded, and still takes each of them', async () => {
    const res = await send('POST', '/api/v1/skills', 'skillMd=x', 'application/x-www-form-urlencoded');
    assertError(res, 415, 'unsupported_media_type');
    assert.match(res.body.error.message, /send application\/json, text\/markdown or application\/zip/);
    assert.deepEqual(res.body.error.details.accepts, ['application/json', 'text/markdown', 'application/zip']);
    const md = (name: string) => `---\nname: ${name}\ndescription: A skill.\n---\nDo it.\n`;
    assert.equal((await send('POST', '/api/v1/skills', md('as-markdown'), 'text/markdown')).status, 201);
    assert.equal((await send('POST', '/api/v1/skills', JSON.stringify({ skillMd: md('as-json') }), 'application/json')).status, 201);
    const zip = buildZip([{ path: 'as-zip/SKILL.md', data: md('as-zip') }]);
    const zipped = await send('POST', '/api/v1/skills', zip, 'application/zip');
    assert.equal(zipped.status, 201, JSON.stringify(zipped.body));
  });

  it('still reads an empty body and a JSON body with a charset', async () => {
    const cancel = await send('POST', '/api/v1/missions/00000000-0000-0000-0000-000000000000/cancel', '', 'text/plain');
    assertError(cancel, 404, 'not_found');
    const profile = await send('PUT', '/api/v1/profile', JSON.stringify({ company: 'Acme' }), 'application/json; charset=utf-8');
    assert.equal(profile.status, 200, JSON.stringify(profile.body));
  });

  for (const [method, path] of JSON_ROUTES) {
    it(`answers JSON nested 20,000 levels deep to ${method} ${path} with 400 naming the depth`, async () => {
      const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
      const res = await send(method, path, deep, 'application/json');
      assertError(res, 400, 'validation_failed');
      assert.match(res.body.error.message, /nested more than 64 levels deep/);
      assert.deepEqual(res.body.error.details.fields, [{ field: 'body', message: 'nested more than 64 levels deep' }]);
    });
  }

  it('does not count brackets inside strings, and takes JSON nested 64 levels deep', async () => {
    const brackets = await send('POST', '/api/v1/memories', JSON.stringify({ content: `[{${'['.repeat(500)} "\\" [` }), 'application/json');
    assert.equal(brackets.status, 201, JSON.stringify(brackets.body));
    const deepest = `{"preferences":${'{"a":'.repeat(63)}1${'}'.repeat(63)}}`;
    const res = await send('PUT', '/api/v1/profile', deepest, 'application/json');
    assert.notEqual(res.status, 500);
    assert.doesNotMatch(res.body.error?.message ?? '', /nested/);
  });

  it('answers a JSON body over the limit with 413 naming the limit and BODY_LIMIT_KB', async () => {
    const res = await send('POST', '/api/v1/memories', JSON.stringify({ content: 'x'.repeat(600 * 1024) }), 'application/json');
    assertError(res, 413, 'payload_too_large');
    assert.match(res.body.error.message, /over the limit of 512 KB \(set by BODY_LIMIT_KB\)/);
    assert.deepEqual(res.body.error.details, { limitBytes: 512 * 1024, variable: 'BODY_LIMIT_KB' });
  });

  it('answers a zip over the bundle caps with 413 naming the bundle variables', async () => {
    const res = await send('POST', '/api/v1/skills/import/zip', new Uint8Array(200 * 1024), 'application/zip');
    assertError(res, 413, 'payload_too_large');
    assert.match(res.body.error.message, /over the limit of \d+ KB \(set by SKILL_BUNDLE_MAX_TOTAL_KB and SKILL_BUNDLE_MAX_FILES\)/);
  });

  it('answers a bundle over a cap with 413 naming the cap and its variable', async () => {
    const md = { path: 'capped/SKILL.md', data: '---\nname: capped\ndescription: Capped.\n---\nDo it.\n' };
    const many = buildZip([md, ...[1, 2, 3, 4].map((n) => ({ path: `capped/f${n}.txt`, data: `file ${n}` }))]);
    const files = await send('POST', '/api/v1/skills/import/zip', many, 'application/zip');
    assertError(files, 413, 'payload_too_large');
    assert.match(files.body.error.message, /5 files, over the limit of 4 \(set by SKILL_BUNDLE_MAX_FILES\)/);
    assert.equal(files.body.error.details.variable, 'SKILL_BUNDLE_MAX_FILES');
    const big = buildZip([md, { path: 'capped/big.txt', data: 'x'.repeat(17 * 1024) }]);
    const total = await send('POST', '/api/v1/skills', big, 'application/zip');
    assertError(total, 413, 'payload_too_large');
    assert.match(total.body.error.message, /over the limit of 16384 bytes \(set by SKILL_BUNDLE_MAX_(TOTAL|FILE)_KB\)/);
  });

  it('takes zip uploads two at a time with 32 waiting, and answers one more with 503 and Retry-After', { timeout: 60_000 }, async () => {
    const zipOf = (name: string) => buildZip([{ path: `${name}/SKILL.md`, data: `---\nname: ${name}\ndescription: Slot.\n---\nDo it.\n` }]);
    // An upload whose body is half sent: it holds its turn (or its place in the queue) until finished.
    const hold = (name: string) => {
      const zip = zipOf(name);
      const req = request(`${stack.url}/api/v1/skills/import/zip`, {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip', 'content-length': String(zip.length) },
      });
      const answered = new Promise<number>((ok, fail) => {
        req.on('response', (res) => (res.resume(), res.on('end', () => ok(res.statusCode!))));
        req.on('error', fail);
      });
      const sent = new Promise<void>((ok) => req.write(zip.subarray(0, 20), () => ok()));
      return { sent, finish: () => (req.end(zip.subarray(20)), answered) };
    };
    const held = Array.from({ length: 34 }, (_, i) => hold(`slot-${i}`));
    const finished = () => Promise.all(held.map((h) => h.finish()));
    try {
      await Promise.all(held.map((h) => h.sent));
      // Until the server has seen all 34, a probe still gets a turn or a place in the queue (where it gives up after
      // a second, leaving the queue): probe until refused.
      const deadline = Date.now() + 30_000;
      let refused: { status: number; headers: Headers; body: any } | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
      for (let probe = 0; Date.now() < deadline && refused?.status !== 503; probe++) {
        refused = await fetch(`${stack.url}/api/v1/skills/import/zip`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
          body: zipOf(`probe-${probe}`),
          signal: AbortSignal.timeout(1_000),
        }).then(
          async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }),
          () => undefined,
        );
      }
      assert.ok(refused);
      assertError(refused, 503, 'unavailable');
      assert.equal(refused.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
      assert.match(refused.body.error.message, /too many uploads in progress \(2 at once, 32 waiting\)/);
    } finally {
      // Each one either had a turn or a place in the queue and was taken once its body was in, or (when a probe
      // held the place at that moment) was refused: none is lost or left hanging.
      const statuses = await finished();
      assert.ok(
        statuses.every((st) => st === 201 || st === 503),
        `statuses ${statuses.join(',')}`,
      );
      assert.ok(statuses.filter((st) => st === 201).length >= 30, `statuses ${statuses.join(',')}`);
    }
    assert.equal((await send('POST', '/api/v1/skills/import/zip', zipOf('after-the-rush'), 'application/zip')).status, 201);
  });

  for (const [method, path, allow] of [
    ['DELETE', '/api/v1/missions', 'GET, HEAD, POST'],
    ['PUT', '/api/v1/missions/some-id', 'GET, HEAD, PATCH'],
    ['GET', '/api/v1/missions/some-id/cancel', 'POST'],
    ['PUT', '/api/v1/skills', 'GET, HEAD, POST'],
    ['DELETE', '/api/v1/profile', 'GET, HEAD, PUT'],
    ['PUT', '/api/v1/admin/keys', 'GET, HEAD, POST'],
    ['POST', '/healthz', 'GET, HEAD'],
  ] as const) {
    it(`answers ${method} ${path} with 405 and Allow: ${allow}`, async () => {
      const res = await stack.api.request(method, path, { key: keyFor(path) });
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), allow);
      assert.match(res.body.error.message, new RegExp(`${method} is not allowed`));
    });
  }

  it('still answers an unknown path with 404', async () => {
    assertError(await stack.api.request('DELETE', '/api/v1/nothing-here', { key }), 404, 'not_found');
    assertError(await stack.api.request('GET', '/api/v1/missions/a/b/c', { key }), 404, 'not_found');
  });
});
