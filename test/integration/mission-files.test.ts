import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';
import { cliEnv, runCli } from '../helpers/cli-process.ts';
import { parseToolResult } from '../helpers/model-form.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

type FileRef = { id: string; name: string; mediaType: string; size: number; url: string };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const CSV = 'id,total\n1,40\n2,2\n';

const REPORTER_MD = `---
name: reporter
description: Writes its report files with a script.
metadata:
  cadenza-max-turns: "3"
scripts:
  - name: report
    path: scripts/report.py
---
Run the script, then answer.
`;
// Two files, one in a sub-folder, and a link to a host file that must not be followed.
const REPORT_PY = `import os
os.makedirs("/out/charts", exist_ok=True)
open("/out/summary.txt", "w").write("total 42\\n")
open("/out/charts/bars.svg", "w").write("<svg/>")
os.symlink("/etc/passwd", "/out/passwd")
print('{"status": "ok"}')
`;

/** One call of the lab tool `lookup` (the tool server answers it), then a final answer. */
function lookupThenAnswer(stack: TestStack, id: string) {
  stack.model.enqueue({ reply: { toolUses: [{ id, name: 'lab__lookup', input: { q: 'report' } }] } }, { reply: { text: 'Done.' } });
}
const toolResult = (stack: TestStack, id: string) => stack.model.requests.at(-1)!.toolResults.find((r) => r.toolUseId === id)!;

describe('files out: tools and scripts return files to a mission', () => {
  let stack: TestStack;
  let key: string;
  let otherKey: string;
  before(async () => {
    stack = await startTestStack({ env: { MISSION_FILE_MAX_BYTES: '2048', MISSION_FILE_MAX_COUNT: '3' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'file-owner' });
    otherKey = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'file-stranger' });
    await stack.api.createSkill(key, skillMd({ name: 'filer', tools: ['lab.lookup'], maxTurns: 3 }));
    const zip = buildZip([
      { path: 'reporter/SKILL.md', data: REPORTER_MD },
      { path: 'reporter/scripts/report.py', data: REPORT_PY },
    ]);
    const res = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: zip,
    });
    assert.equal(res.status, 201, await res.text());
  });
  after(() => stack.stop());

  it('stores an HTTP tool’s base64 file: the model, the embed and result.files see a reference, the owner downloads it', async () => {
    stack.tools.on('lookup', () => ({
      body: {
        hit: 'found',
        files: [
          { name: 'totals.csv', mediaType: 'text/csv', base64: b64(CSV) },
          { name: 'page.html', mediaType: 'text/html', base64: b64('<script>alert(1)</script>') },
        ],
      },
    }));
    lookupThenAnswer(stack, 'tu_files');
    const { id } = await stack.api.startMission(key, { skill: 'filer', objective: 'Make the totals file.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');

    const seen = toolResult(stack, 'tu_files');
    assert.equal(seen.isError, false, seen.content);
    assert.ok(!seen.content.includes(b64(CSV)), 'the model never reads the bytes');
    const forModel = parseToolResult(seen.content) as { hit: string; files: FileRef[] };
    assert.equal(forModel.hit, 'found');
    assert.deepEqual(
      forModel.files.map((f) => [f.name, f.mediaType, f.size]),
      [
        ['page.html', 'text/html', 25],
        ['totals.csv', 'text/csv', CSV.length],
      ],
    );
    const files = mission.result.files as FileRef[];
    assert.deepEqual(files.map((f) => f.name).sort(), ['page.html', 'totals.csv']);
    const listed = await stack.api.request('GET', `/api/v1/missions/${id}/files`, { key });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.items.map((f: FileRef) => f.id).sort(), files.map((f) => f.id).sort());
    const embeds = await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key });
    assert.deepEqual(
      (embeds.body.items[0].result.files as FileRef[]).map((f) => f.name),
      ['page.html', 'totals.csv'],
    );

    const csv = files.find((f) => f.name === 'totals.csv')!;
    const download = await fetch(`${stack.url}${csv.url}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(download.status, 200);
    assert.equal(await download.text(), CSV);
    assert.match(download.headers.get('content-type')!, /^text\/csv/);
    assert.match(download.headers.get('content-disposition')!, /^attachment; filename="?totals\.csv"?$/);
    assert.equal(download.headers.get('x-content-type-options'), 'nosniff');
    // The command line lists them and downloads one, byte for byte.
    const env = cliEnv(stack.url, key);
    const byCli = await runCli(['missions', 'files', id], env);
    assert.equal(byCli.code, 0, byCli.stderr);
    assert.match(byCli.stdout, new RegExp(`^${csv.id}\\s+totals\\.csv\\s+text/csv\\s+${CSV.length}\\s+lab\\.lookup$`, 'm'));
    const out = join(mkdtempSync(join(tmpdir(), 'cadenza-files-')), 'totals.csv');
    const saved = await runCli(['missions', 'files', id, csv.id, '--output', out], env);
    assert.equal(saved.code, 0, saved.stderr);
    assert.equal(readFileSync(out, 'utf8'), CSV);
    const html = files.find((f) => f.name === 'page.html')!;
    const page = await fetch(`${stack.url}${html.url}`, { headers: { authorization: `Bearer ${key}` } });
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.match(page.headers.get('content-disposition')!, /^attachment;/, 'never rendered inline');
    assert.match(page.headers.get('content-security-policy')!, /sandbox/);

    const me = await stack.api.request('GET', '/api/v1/me', { key });
    assert.deepEqual(me.body.storage, { files: 2, fileBytes: CSV.length + 25 });
  });

  it('answers 404 for someone else’s mission files and file', async () => {
    const [file] = (await stack.db.selectFrom('mission_files').selectAll().where('user_id', '=', 'file-owner').execute()) as Array<{
      id: string;
      mission_id: string;
    }>;
    assert.ok(file, 'a file of the owner exists');
    const list = await stack.api.request('GET', `/api/v1/missions/${file.mission_id}/files`, { key: otherKey });
    assert.equal(list.status, 404);
    const download = await fetch(`${stack.url}/api/v1/missions/${file.mission_id}/files/${file.id}`, {
      headers: { authorization: `Bearer ${otherKey}` },
    });
    assert.equal(download.status, 404);
    assert.equal(((await download.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.deepEqual((await stack.api.request('GET', '/api/v1/me', { key: otherKey })).body.storage, { files: 0, fileBytes: 0 });
  });

  it('gives the model an error naming the cap for a file over MISSION_FILE_MAX_BYTES, too many files, or a url', async () => {
    const cases: Array<[string, unknown[], RegExp]> = [
      ['tu_big', [{ name: 'big.bin', base64: b64('x'.repeat(3000)) }], /big\.bin is larger than MISSION_FILE_MAX_BYTES \(2048 bytes\)/],
      [
        'tu_many',
        ['a', 'b', 'c', 'd'].map((n) => ({ name: `${n}.txt`, mediaType: 'text/plain', base64: b64(n) })),
        /would number 4, over MISSION_FILE_MAX_COUNT \(3\)/,
      ],
      ['tu_url', [{ name: 'far.pdf', url: 'http://169.254.169.254/latest' }], /far\.pdf: a file given by url is refused/],
    ];
    for (const [toolUseId, files, error] of cases) {
      stack.tools.on('lookup', () => ({ body: { hit: 'found', files } }));
      lookupThenAnswer(stack, toolUseId);
      const { id } = await stack.api.startMission(key, { skill: 'filer', objective: `Return ${toolUseId}.` });
      assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
      const seen = toolResult(stack, toolUseId);
      assert.equal(seen.isError, true, toolUseId);
      assert.match(seen.content, error);
      assert.deepEqual((await stack.api.request('GET', `/api/v1/missions/${id}/files`, { key })).body.items, [], 'nothing stored');
    }
  });

  it('leaves a system tool’s own `files` key alone: use_skill still lists a bundle’s paths', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_use', name: 'use_skill', input: { name: 'reporter' } }] } },
      { reply: { text: 'Loaded.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'filer', objective: 'Load the reporter.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const seen = toolResult(stack, 'tu_use');
    assert.equal(seen.isError, false, seen.content);
    assert.deepEqual((parseToolResult(seen.content) as { files: string[] }).files, ['SKILL.md', 'scripts/report.py']);
  });

  it('stores what a script writes under /out, skipping a link to a host file', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_script', name: 'run_skill_script', input: { script: 'report' } }] } },
      { reply: { text: 'Reported.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'reporter', objective: 'Write the report.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const seen = toolResult(stack, 'tu_script');
    assert.equal(seen.isError, false, seen.content);
    const files = mission.result.files as FileRef[];
    assert.deepEqual(
      files.map((f) => [f.name, f.mediaType]),
      [
        ['charts/bars.svg', 'image/svg+xml'],
        ['summary.txt', 'text/plain'],
      ],
    );
    const summary = files.find((f) => f.name === 'summary.txt')!;
    const download = await fetch(`${stack.url}${summary.url}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(await download.text(), 'total 42\n');
    const svg = await fetch(`${stack.url}${files[0]!.url}`, { headers: { authorization: `Bearer ${key}` } });
    assert.match(svg.headers.get('content-disposition')!, /^attachment; filename="?bars\.svg"?$/);
  });
});

describe('files out across a worker’s death (SIGKILL)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'filer', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('a worker killed after the files were stored, before the call ended, leaves each file once', async () => {
    // The first end-write of the call stalls (a trigger sleeps once), so the worker dies between storing the files
    // and recording the call's end; the next attempt runs the call again.
    await sql`create sequence stall_once`.execute(stack.db);
    await sql`
      create function stall_tool_end() returns trigger language plpgsql as $$
      begin
        if new.tool_use_id = 'tu_kill' and nextval('stall_once') = 1 then perform pg_sleep(8); end if;
        return new;
      end $$`.execute(stack.db);
    await sql`create trigger stall_tool_end before insert on tool_calls for each row execute function stall_tool_end()`.execute(stack.db);
    stack.tools.on('lookup', () => ({ body: { hit: 'found', files: [{ name: 'once.csv', mediaType: 'text/csv', base64: b64(CSV) }] } }));
    lookupThenAnswer(stack, 'tu_kill');
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'filer', objective: 'Survive with the file.' });
    await stack.tools.waitFor(() => stack.tools.requests.length >= 1);
    for (let i = 0; ; i++) {
      const stored = await stack.db.selectFrom('mission_files').select('id').where('mission_id', '=', id).execute();
      if (stored.length > 0) break;
      assert.ok(i < 200, 'the file was stored');
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      const rows = await stack.db.selectFrom('mission_files').selectAll().where('mission_id', '=', id).execute();
      assert.equal(rows.length, 1, 'one file, not one per attempt');
      assert.deepEqual(
        (mission.result.files as FileRef[]).map((f) => f.id),
        [rows[0]!.id],
      );
      const blobs = await stack.db.selectFrom('file_blobs').select('sha256').execute();
      assert.equal(blobs.length, 1);
      const download = await fetch(`${stack.url}${(mission.result.files as FileRef[])[0]!.url}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(await download.text(), CSV);
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
