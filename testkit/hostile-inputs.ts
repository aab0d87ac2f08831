import { buildZip, bundleSkillMd } from './zip-builder.ts';

/** One hostile request: what a fuzzer or a broken client sends. Every answer must be below 500. */
export type HostileRequest = {
  name: string;
  method: string;
  path: string;
  /** Sent as is; `{ json }` is serialised. */
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Use the admin key instead of the user's. */
  admin?: boolean;
};

const nested = (depth: number, open: string, close: string, leaf = '1') => open.repeat(depth) + leaf + close.repeat(depth);
const JSON_ENDPOINTS: Array<[string, string]> = [
  ['POST', '/api/v1/missions'],
  ['POST', '/api/v1/skills'],
  ['POST', '/api/v1/skills/import'],
  ['POST', '/api/v1/memories'],
  ['PUT', '/api/v1/profile'],
  ['POST', '/api/v1/integrations'],
  ['POST', '/api/v1/admin/keys'],
];

const md = (frontmatter: string) => `---\n${frontmatter}\n---\nDo the thing.\n`;
const aliasBomb = md(
  [
    'name: laughs',
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
    'description: *g',
  ].join('\n'),
);

/** A valid zip whose end record says its central directory starts past the end of the file. */
function zipPointingPastEnd(): Buffer {
  const zip = buildZip([{ path: 'pointer/SKILL.md', data: bundleSkillMd('pointer') }]);
  const end = zip.length - 22;
  zip.writeUInt32LE(zip.length + 10_000, end + 16);
  return zip;
}

/** The hostile-input set of the chaos suite (issue 10): deep JSON, YAML aliases, bad zips, NUL bytes, huge bodies, wrong types. */
export function hostileRequests(): HostileRequest[] {
  const out: HostileRequest[] = [];
  const json = { 'content-type': 'application/json' };
  for (const [method, path] of JSON_ENDPOINTS) {
    for (const depth of [1_000, 10_000, 100_000]) {
      out.push({
        name: `array nested ${depth} deep → ${method} ${path}`,
        method,
        path,
        body: nested(depth, '[', ']'),
        headers: json,
        admin: path.includes('admin'),
      });
      out.push({
        name: `object nested ${depth} deep → ${method} ${path}`,
        method,
        path,
        body: nested(depth, '{"a":', '}'),
        headers: json,
        admin: path.includes('admin'),
      });
    }
    out.push({
      name: `NUL in a JSON string → ${method} ${path}`,
      method,
      path,
      body: '{"objective":"a\\u0000b","skillMd":"\\u0000"}',
      headers: json,
    });
    out.push({ name: `not JSON → ${method} ${path}`, method, path, body: '{"skill": ', headers: json });
    out.push({ name: `JSON null → ${method} ${path}`, method, path, body: 'null', headers: json });
    out.push({ name: `text/plain body → ${method} ${path}`, method, path, body: 'hello', headers: { 'content-type': 'text/plain' } });
    out.push({ name: `XML body → ${method} ${path}`, method, path, body: '<a/>', headers: { 'content-type': 'application/xml' } });
    out.push({ name: `no content type → ${method} ${path}`, method, path, body: '{}' });
    out.push({
      name: `utf-16 charset → ${method} ${path}`,
      method,
      path,
      body: '{}',
      headers: { 'content-type': 'application/json; charset=utf-16' },
    });
    out.push({
      name: `invalid UTF-8 → ${method} ${path}`,
      method,
      path,
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      headers: json,
    });
  }
  const markdown = { 'content-type': 'text/markdown' };
  for (const path of ['/api/v1/skills', '/api/v1/skills/import']) {
    out.push({
      name: `YAML undefined alias → ${path}`,
      method: 'POST',
      path,
      body: md('name: nope\ndescription: *nope'),
      headers: markdown,
    });
    out.push({ name: `YAML alias bomb → ${path}`, method: 'POST', path, body: aliasBomb, headers: markdown });
    out.push({
      name: `YAML deep flow nesting → ${path}`,
      method: 'POST',
      path,
      body: md(`name: deep\ndescription: ${nested(10_000, '[', ']')}`),
      headers: markdown,
    });
    out.push({
      name: `YAML merge-key alias → ${path}`,
      method: 'POST',
      path,
      body: md('name: merge\nbase: &b {x: 1}\nmetadata:\n  <<: *b\ndescription: ok'),
      headers: markdown,
    });
    out.push({
      name: `NUL bytes in SKILL.md → ${path}`,
      method: 'POST',
      path,
      body: md('name: nul\ndescription: a\u0000b'),
      headers: markdown,
    });
    out.push({
      name: `binary as markdown → ${path}`,
      method: 'POST',
      path,
      body: Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 0]),
      headers: markdown,
    });
    out.push({ name: `frontmatter never closed → ${path}`, method: 'POST', path, body: '---\nname: open\n', headers: markdown });
  }
  const zip = { 'content-type': 'application/zip' };
  const zips: Array<[string, Buffer]> = [
    ['central directory past the end', zipPointingPastEnd()],
    ['truncated', buildZip([{ path: 'cut/SKILL.md', data: bundleSkillMd('cut') }]).subarray(0, 40)],
    ['only an end record', Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)])],
    ['random bytes after PK', Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(2_000, 0xa5)])],
    ['empty', Buffer.alloc(0)],
  ];
  for (const path of ['/api/v1/skills', '/api/v1/skills/import/zip']) {
    for (const [what, bytes] of zips) out.push({ name: `zip ${what} → ${path}`, method: 'POST', path, body: bytes, headers: zip });
  }
  const big = 'x'.repeat(3 * 1024 * 1024);
  out.push({
    name: 'huge JSON body (3 MiB) → POST /missions',
    method: 'POST',
    path: '/api/v1/missions',
    body: JSON.stringify({ objective: big }),
    headers: json,
  });
  out.push({
    name: 'huge markdown body (3 MiB) → POST /skills',
    method: 'POST',
    path: '/api/v1/skills',
    body: md(`name: big\ndescription: ${big}`),
    headers: markdown,
  });
  out.push({
    name: 'huge zip body (12 MiB) → POST /skills/import/zip',
    method: 'POST',
    path: '/api/v1/skills/import/zip',
    body: Buffer.alloc(12 * 1024 * 1024, 1),
    headers: zip,
  });
  for (const path of [
    '/api/v1/missions/%00',
    '/api/v1/missions/%E0%A4%A',
    '/api/v1/missions/not-a-uuid',
    '/api/v1/missions?limit=-1&cursor=%00',
    '/api/v1/missions?cursor=garbage',
    '/api/v1/skills/%00',
    '/api/v1/skills/discover?q=%00',
    '/api/v1/skills/discover?q=' + 'a'.repeat(20_000),
    '/api/v1/memories?q=%00',
    '/api/v1/activity?limit=abc',
  ]) {
    out.push({ name: `GET ${path.slice(0, 60)}`, method: 'GET', path });
  }
  out.push({
    name: 'Last-Event-ID not a number',
    method: 'GET',
    path: '/api/v1/missions/00000000-0000-0000-0000-000000000000/events',
    headers: { 'last-event-id': 'abc' },
  });
  out.push({
    name: 'tool cancel on unknown ids',
    method: 'POST',
    path: '/api/v1/missions/00000000-0000-0000-0000-000000000000/tools/%00/cancel',
  });
  return out;
}

/** Sends every hostile request; returns each answer's status (0 when the connection failed or timed out). */
export async function sendHostileRequests(baseUrl: string, keys: { user: string; admin: string }) {
  const answers: Array<{ name: string; status: number; body: string }> = [];
  for (const r of hostileRequests()) {
    const headers = { authorization: `Bearer ${r.admin ? keys.admin : keys.user}`, ...r.headers };
    try {
      const res = await fetch(`${baseUrl}${r.path}`, {
        method: r.method,
        headers,
        ...(r.body !== undefined ? { body: r.body } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      answers.push({ name: r.name, status: res.status, body: (await res.text()).slice(0, 300) });
    } catch (err) {
      answers.push({ name: r.name, status: 0, body: String(err) });
    }
  }
  return answers;
}
