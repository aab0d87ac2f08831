import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('skills API', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'author' });
  });
  after(() => stack.stop());

  const postMarkdown = (md: string, k = key, contentType = 'text/markdown') =>
    stack.api.request('POST', '/api/v1/skills', { key: k, raw: md, headers: { 'content-type': contentType } });
  const postJson = (body: unknown, k = key) => stack.api.request('POST', '/api/v1/skills', { key: k, body });
  const fieldsOf = (body: { error: { details: { fields: Array<{ field: string }> } } }) => body.error.details.fields.map((f) => f.field);

  it('creates a skill from a raw text/markdown body: 201 {id, name, version, status}', async () => {
    const res = await postMarkdown(skillMd({ name: 'from-markdown' }));
    assert.equal(res.status, 201);
    assert.equal(typeof res.body.id, 'string');
    assert.equal(res.body.name, 'from-markdown');
    assert.equal(res.body.version, 1);
    assert.equal(res.body.status, 'active');
  });

  it('creates a skill from JSON {skillMd}', async () => {
    const res = await postJson({ skillMd: skillMd({ name: 'from-json', tools: ['lab.lookup'], maxTurns: 3 }) });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'from-json');
    assert.equal(res.body.version, 1);
  });

  it('accepts text/markdown with a charset and text/plain', async () => {
    assert.equal((await postMarkdown(skillMd({ name: 'with-charset' }), key, 'text/markdown; charset=utf-8')).status, 201);
    assert.equal((await postMarkdown(skillMd({ name: 'as-plain-text' }), key, 'text/plain')).status, 201);
  });

  it('answers 400 naming every bad field of an invalid SKILL.md', async () => {
    const md = ['---', 'name: Bad_Name', 'allowed-tools: weather, search', 'max-turns: 0', 'model: enormous', '---', 'Do things.', ''].join(
      '\n',
    );
    const res = await postMarkdown(md);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_failed');
    const fields = fieldsOf(res.body);
    for (const field of ['name', 'description', 'allowed-tools', 'max-turns', 'model'])
      assert.ok(fields.includes(field), `${field} in ${fields}`);
    for (const f of res.body.error.details.fields) assert.equal(typeof f.message, 'string');
    assert.match(res.body.error.message, /max-turns/);
  });

  it('answers 400 naming a misspelt field, a non-integer max-turns and an empty body', async () => {
    const md = ['---', 'name: misspelt', 'description: Has typos.', 'max_turns: 3', 'max-turns: many', '---', '', ''].join('\n');
    const res = await postJson({ skillMd: md });
    assert.equal(res.status, 400);
    const fields = fieldsOf(res.body);
    for (const field of ['max_turns', 'max-turns', 'body']) assert.ok(fields.includes(field), `${field} in ${fields}`);
  });

  it('answers 400 naming the frontmatter when there is none', async () => {
    const res = await postMarkdown('Just some prose, no frontmatter.\n');
    assert.equal(res.status, 400);
    assert.ok(fieldsOf(res.body).includes('frontmatter'));
  });

  it('answers 400 naming skillMd for a JSON body without it, and for an empty body', async () => {
    for (const body of [{}, { skillMd: '' }, { skillMd: 42 }, { markdown: 'x' }]) {
      const res = await postJson(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(fieldsOf(res.body), ['skillMd']);
    }
    const empty = await stack.api.request('POST', '/api/v1/skills', { key });
    assert.equal(empty.status, 400);
  });

  it('answers 409 to a second skill of the same name, and keeps the first', async () => {
    const first = await postMarkdown(skillMd({ name: 'twice', body: 'First procedure.' }));
    assert.equal(first.status, 201);
    const second = await postMarkdown(skillMd({ name: 'twice', body: 'Second procedure.' }));
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, 'conflict');
    const detail = await stack.api.request('GET', `/api/v1/skills/${first.body.id}`, { key });
    assert.match(detail.body.body, /First procedure/);
    const rows = await stack.db.selectFrom('skills').select('id').where('name', '=', 'twice').execute();
    assert.equal(rows.length, 1);
  });

  it('answers exactly one 201 when the same name is posted concurrently', async () => {
    const results = await Promise.all([1, 2, 3].map(() => postMarkdown(skillMd({ name: 'racing' }))));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409]);
  });

  it('lets another user take a name this user already has', async () => {
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    await stack.api.createSkill(key, skillMd({ name: 'shared-name' }));
    assert.equal((await postMarkdown(skillMd({ name: 'shared-name' }), other)).status, 201);
  });

  it('lists only the caller’s skills', async () => {
    const loner = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'lister' });
    await stack.api.createSkill(loner, skillMd({ name: 'zeta' }));
    await stack.api.createSkill(loner, skillMd({ name: 'alpha' }));
    const res = await stack.api.request('GET', '/api/v1/skills', { key: loner });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.items.map((s: { name: string }) => s.name).sort(), ['alpha', 'zeta']);
    const alpha = res.body.items.find((s: { name: string }) => s.name === 'alpha');
    assert.equal(alpha.description, 'Test skill alpha.');
    assert.equal(alpha.version, 1);
    assert.equal(alpha.status, 'active');
  });

  it('returns the detail of a skill with its frontmatter, its spec and its procedure', async () => {
    const md = skillMd({
      name: 'detailed',
      tools: ['lab.lookup', 'lab.scan'],
      maxTurns: 4,
      model: 'forte',
      body: 'Step one.\n\nStep two.',
    });
    const { id } = await stack.api.createSkill(key, md);
    const res = await stack.api.request('GET', `/api/v1/skills/${id}`, { key });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, id);
    assert.equal(res.body.name, 'detailed');
    assert.equal(res.body.description, 'Test skill detailed.');
    assert.equal(res.body.version, 1);
    assert.deepEqual(res.body.frontmatter.metadata, { 'cadenza-max-turns': '4', 'cadenza-model': 'forte' });
    assert.deepEqual(res.body.spec, {
      tier: 'forte',
      allowedTools: ['lab.lookup', 'lab.scan'],
      maxTurns: 4,
      triggers: [],
      notFor: [],
      scripts: [],
      approval: [],
    });
    assert.equal(res.body.body, 'Step one.\n\nStep two.');
    assert.equal(res.body.sha256, createHash('sha256').update(md).digest('hex'));
    assert.equal((await stack.api.request('GET', `/api/v1/skills/${id}?version=1`, { key })).status, 200);
  });

  it('answers 404 for a version that does not exist and 400 for a version that is not a number', async () => {
    const { id } = await stack.api.createSkill(key, skillMd({ name: 'versioned' }));
    const missing = await stack.api.request('GET', `/api/v1/skills/${id}?version=2`, { key });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    for (const version of ['abc', '0', '1.5']) {
      const bad = await stack.api.request('GET', `/api/v1/skills/${id}?version=${version}`, { key });
      assert.equal(bad.status, 400, `version=${version}`);
      assert.deepEqual(fieldsOf(bad.body), ['version']);
    }
  });

  it('answers 404 for another user’s skill, exactly as for a missing id', async () => {
    const { id } = await stack.api.createSkill(key, skillMd({ name: 'private' }));
    const missing = await stack.api.request('GET', '/api/v1/skills/00000000-0000-4000-8000-000000000000', { key });
    assert.equal(missing.status, 404);
    const sameTenant = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'snoop' });
    // Same user id in another tenant is a different owner too.
    const otherTenant = await stack.api.newKey(undefined, { tenantId: 'globex', userId: 'author' });
    for (const other of [sameTenant, otherTenant]) {
      for (const path of [`/api/v1/skills/${id}`, `/api/v1/skills/${id}/export`]) {
        const res = await stack.api.request('GET', path, { key: other });
        assert.equal(res.status, 404, path);
        assert.deepEqual(res.body, missing.body, `${path} says no more than for a missing skill`);
      }
      const list = await stack.api.request('GET', '/api/v1/skills', { key: other });
      assert.ok(!list.body.items.some((s: { id: string }) => s.id === id));
    }
  });

  it('exports the stored bytes verbatim: byte-order mark, CRLF line ends, trailing whitespace, non-ASCII', async () => {
    const md =
      '\uFEFF---\r\nname: crlf-skill\r\ndescription: Keeps   its bytes.  \r\n---\r\n\r\nStep one:\tdo it.   \r\nÉtape deux — ✓ 🎵\r\n\r\n\r\n  ';
    const { id } = await stack.api.createSkill(key, md);
    const res = await fetch(`${stack.url}/api/v1/skills/${id}/export`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/markdown/);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.ok(bytes.equals(Buffer.from(md, 'utf8')), `exported ${JSON.stringify(bytes.toString())}`);
  });

  it('exports a skill sent as JSON {skillMd} verbatim too', async () => {
    const md = '---\nname: json-verbatim\ndescription: Tabs\tand spaces.\n---\nBody line with trailing spaces   \n\n';
    const created = await postJson({ skillMd: md });
    assert.equal(created.status, 201);
    const res = await fetch(`${stack.url}/api/v1/skills/${created.body.id}/export`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(await res.text(), md);
  });
});
