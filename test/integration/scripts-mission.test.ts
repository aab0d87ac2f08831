import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { alive, pidsWith, waitFor } from '../helpers/processes.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip, type RawEntry } from '../../testkit/zip-builder.ts';
import { parseToolResult } from '../helpers/model-form.ts';

const CORPUS = fileURLToPath(new URL('../../../shared/corpus/skills/anthropics-skills/webapp-testing/', import.meta.url));

// A script's side of the callback pipe: one JSON line out, one JSON line back.
const CALL_PY = `import json, os
def call(tool, input):
    fd = int(os.environ["CADENZA_TOOL_FD"])
    os.write(fd, (json.dumps({"tool": tool, "input": input}) + "\\n").encode())
    reply = b""
    while not reply.endswith(b"\\n"):
        reply += os.read(fd, 65536)
    return json.loads(reply)
`;

const SKILL_MD = `---
name: ledger
description: Summarises ledger rows with its scripts.
max-turns: 3
scripts:
  - name: summarise
    path: scripts/summarise.py
    postconditions: ['rows.length > 0', 'status == "ok"', 'rows[0].id != null', 'total >= 1']
  - name: strict_summary
    path: scripts/summary.mjs
    postconditions: ['rows.length > 5', 'status == "ok"']
  - name: recall
    path: scripts/recall.py
  - name: wait
    path: scripts/wait.py
---
Run the scripts, then answer.
`;

const files = (): RawEntry[] => [
  { path: 'ledger/SKILL.md', data: SKILL_MD },
  {
    path: 'ledger/scripts/summarise.py',
    data: 'import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({"status": "ok", "rows": [{"id": i} for i in args["ids"]]}))\n',
  },
  {
    path: 'ledger/scripts/summary.mjs',
    data: "let s = '';\nfor await (const c of process.stdin) s += c;\nconst { ids } = JSON.parse(s);\nconsole.log(JSON.stringify({ status: 'ok', rows: ids.map((id) => ({ id })) }));\n",
  },
  {
    path: 'ledger/scripts/recall.py',
    data: `${CALL_PY}print(json.dumps({"search": call("search_memory", {"query": "ledger currency"}), "save": call("save_memory", {"content": "written by a script"})}))\n`,
  },
  { path: 'ledger/scripts/wait.py', data: 'import os, time\nif os.fork() == 0:\n    time.sleep(120)\ntime.sleep(120)\n', deflate: true },
];

describe('skill scripts in a mission', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { SCRIPT_TIMEOUT_S: '60' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'script-user' });
    const res = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: buildZip(files()),
    });
    assert.equal(res.status, 201, await res.text());
    const memory = await stack.api.request('POST', '/api/v1/memories', { key, body: { content: 'The ledger currency is EUR.' } });
    assert.equal(memory.status, 201);
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    const theirs = files().map((f) => ({ ...f, path: f.path.replace('ledger', 'theirs') }));
    theirs[0]!.data = SKILL_MD.replace('name: ledger', 'name: theirs');
    const stored = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'content-type': 'application/zip' },
      body: buildZip(theirs),
    });
    assert.equal(stored.status, 201);
  });
  after(() => stack.stop());

  it('runs declared scripts through run_skill_script: postconditions passed, failed and unverifiable', async () => {
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_sum', name: 'run_skill_script', input: { script: 'summarise', args: { ids: [4, 5] } } },
            { id: 'tu_strict', name: 'run_skill_script', input: { script: 'strict_summary', args: { ids: [4, 5] } } },
            { id: 'tu_none', name: 'run_skill_script', input: { script: 'nope' } },
            { id: 'tu_theirs', name: 'run_skill_script', input: { skill: 'theirs', script: 'summarise', args: { ids: [1] } } },
          ],
        },
      },
      { reply: { text: 'Summarised.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'ledger', objective: 'Summarise rows 4 and 5.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    assert.ok(stack.model.requests[0]!.toolNames.includes('run_skill_script'));
    assert.ok(
      !stack.model.requests[0]!.toolNames.some((n) => n === 'summarise' || n.includes('recall')),
      'a script is never a tool of its own',
    );
    const results = Object.fromEntries(stack.model.requests[1]!.toolResults.map((r) => [r.toolUseId, r]));
    const sum = parseToolResult(results.tu_sum!.content) as {
      output: unknown;
      postconditions: Array<{ expression: string; status: string }>;
    };
    assert.equal(results.tu_sum!.isError, false);
    assert.deepEqual(sum.output, { status: 'ok', rows: [{ id: 4 }, { id: 5 }] });
    assert.deepEqual(
      sum.postconditions.map((c) => [c.expression, c.status]),
      [
        ['rows.length > 0', 'passed'],
        ['status == "ok"', 'passed'],
        ['rows[0].id != null', 'passed'],
        ['total >= 1', 'unverifiable'],
      ],
    );
    assert.equal(results.tu_strict!.isError, true, 'a failed postcondition is an error the model sees');
    assert.match(results.tu_strict!.content, /1 postcondition\(s\) failed: rows\.length > 5 \(rows\.length is 2\)/);
    assert.equal(results.tu_none!.isError, true);
    assert.match(results.tu_none!.content, /no script "nope"; this skill has summarise, strict_summary, recall, wait/);
    assert.equal(results.tu_theirs!.isError, true);
    assert.match(results.tu_theirs!.content, /there is no active skill named theirs/);
    const detail = await stack.api.request('GET', `/api/v1/missions/${id}`, { key });
    const roles = (detail.body.provenance as Array<{ role: string; name: string; bundleSha256: string }>).map((p) => [p.role, p.name]);
    assert.deepEqual(roles, [
      ['ran', 'ledger'],
      ['script', 'ledger'],
    ]);
  });

  it('lets a script call its one allowed tool, refuses another, and records both calls', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_recall', name: 'run_skill_script', input: { script: 'recall' } }] } },
      { reply: { text: 'EUR.' } },
    );
    const before = await stack.api.request('GET', '/api/v1/memories', { key });
    const { id } = await stack.api.startMission(key, { skill: 'ledger', objective: 'Which currency?' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    const result = stack.model.requests.at(-1)!.toolResults.find((r) => r.toolUseId === 'tu_recall')!;
    const { output } = parseToolResult(result.content) as {
      output: { search: { ok: boolean; result: { memories: Array<{ content: string }> } }; save: { ok: boolean; error: string } };
    };
    assert.equal(output.search.ok, true);
    assert.ok(output.search.result.memories.some((m) => m.content === 'The ledger currency is EUR.'));
    assert.equal(output.save.ok, false);
    assert.match(output.save.error, /a script may call search_memory \(SCRIPT_TOOL_ALLOWLIST\), not save_memory/);
    const afterwards = await stack.api.request('GET', '/api/v1/memories', { key });
    assert.equal(
      afterwards.body.items.filter((m: { content: string }) => m.content === 'written by a script').length,
      0,
      'the refused tool did not run',
    );
    assert.ok(afterwards.body.items.length >= before.body.items.length);

    const calls = await stack.db
      .selectFrom('tool_calls')
      .select(['tool_use_id', 'tool', 'status'])
      .where('mission_id', '=', id)
      .orderBy('tool_use_id')
      .execute();
    assert.deepEqual(calls, [
      { tool_use_id: 'tu_recall', tool: 'system.run_skill_script', status: 'completed' },
      { tool_use_id: 'tu_recall/call-1', tool: 'system.search_memory', status: 'completed' },
      { tool_use_id: 'tu_recall/call-2', tool: 'system.save_memory', status: 'error' },
    ]);
    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    const ends = feed.body.items.filter((r: { kind: string }) => r.kind === 'tool_end');
    assert.ok(ends.some((r: { toolUseId: string; outcome: string }) => r.toolUseId === 'tu_recall/call-1' && r.outcome === 'completed'));
    assert.ok(ends.some((r: { toolUseId: string; outcome: string }) => r.toolUseId === 'tu_recall/call-2' && r.outcome === 'error'));
  });

  it('kills the script’s processes when its tool call is cancelled, and the mission goes on', async () => {
    const marker = `wait-${randomBytes(4).toString('hex')}`;
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_wait', name: 'run_skill_script', input: { script: 'wait', args: [marker] } }] } },
      { reply: { text: 'Gave up waiting.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'ledger', objective: 'Wait.' });
    const pids = await waitFor('the script and its child', () => (pidsWith(marker).length >= 2 ? pidsWith(marker) : undefined), 30_000);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_wait/cancel`, { key })).status, 202);
    await waitFor('the script’s processes to be gone', () => (pids.every((pid) => !alive(pid)) ? true : undefined), 10_000);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'Gave up waiting.');
    const result = stack.model.requests.at(-1)!.toolResults.find((r) => r.toolUseId === 'tu_wait')!;
    assert.ok(result.isError && /cancelled/.test(result.content));
  });

  it('kills the script’s processes when the mission is cancelled', async () => {
    const marker = `wait-${randomBytes(4).toString('hex')}`;
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_wait2', name: 'run_skill_script', input: { script: 'wait', args: [marker] } }] } });
    const { id } = await stack.api.startMission(key, { skill: 'ledger', objective: 'Wait forever.' });
    const pids = await waitFor('the script and its child', () => (pidsWith(marker).length >= 2 ? pidsWith(marker) : undefined), 30_000);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    await waitFor('the script’s processes to be gone', () => (pids.every((pid) => !alive(pid)) ? true : undefined), 10_000);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'cancelled');
  });

  it('refuses a postcondition the grammar cannot read when authoring, and keeps it with a warning when importing', async () => {
    const skill = (name: string) =>
      buildZip([
        {
          path: `${name}/SKILL.md`,
          data: `---\nname: ${name}\ndescription: Odd checks.\nscripts:\n  - name: x\n    path: scripts/x.py\n    postconditions: ['rows.map(r => r.id) contains 1']\n---\nRun x.\n`,
        },
        { path: `${name}/scripts/x.py`, data: 'print("{}")\n' },
      ]);
    const post = (path: string, name: string) =>
      fetch(`${stack.url}/api/v1/skills${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
        body: skill(name),
      });
    const authored = await post('', 'odd-authored');
    assert.equal(authored.status, 400);
    const body = (await authored.json()) as { error: { details: { fields: Array<{ field: string; message: string }> } } };
    assert.ok(
      body.error.details.fields.some(
        (f) => f.field === 'scripts' && /x: postcondition 'rows\.map\(r => r\.id\) contains 1' expects an operator/.test(f.message),
      ),
      JSON.stringify(body),
    );
    const imported = await post('/import/zip', 'odd-imported');
    assert.equal(imported.status, 201);
    const { warnings } = (await imported.json()) as { warnings: Array<{ field: string; message: string }> };
    assert.ok(warnings.some((w) => w.field === 'scripts' && /postcondition/.test(w.message)));
  });

  it(
    'runs a real-world corpus skill’s script from its imported bundle, after review (needs no third-party package)',
    { skip: !existsSync(join(CORPUS, 'SKILL.md')) && 'no corpus' },
    async () => {
      const entries: RawEntry[] = listFiles(CORPUS).map((p) => ({
        path: `webapp-testing/${p}`,
        data: readFileSync(join(CORPUS, p)),
        deflate: true,
      }));
      const imported = await fetch(`${stack.url}/api/v1/skills/import/zip`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
        body: buildZip(entries),
      });
      assert.equal(imported.status, 201);
      const { id: skillId } = (await imported.json()) as { id: string };
      const detail = await stack.api.request('GET', `/api/v1/skills/${skillId}`, { key });
      const scan = detail.body.importAudit.scan as Array<{ file: string; kind: string }>;
      assert.ok(
        scan.some((f) => f.file === 'scripts/with_server.py' && f.kind === 'network'),
        JSON.stringify(scan),
      );
      assert.ok(scan.some((f) => f.file === 'scripts/with_server.py' && f.kind === 'process'));

      const call = { id: 'tu_help', name: 'run_skill_script', input: { script: 'scripts/with_server.py', args: ['--help'] } };
      stack.model.enqueue({ reply: { toolUses: [call] } }, { reply: { text: 'It starts servers.' } });
      const quarantined = await stack.api.request('POST', '/api/v1/missions', {
        key,
        body: { skill: 'webapp-testing', objective: 'How is with_server used?', workspaceCode: 'ws-1' },
      });
      assert.equal(quarantined.status, 422, 'not runnable before review');
      assert.equal((await stack.api.request('POST', `/api/v1/skills/${skillId}/activate`, { key })).status, 200);

      const { id } = await stack.api.startMission(key, { skill: 'webapp-testing', objective: 'How is with_server used?' });
      assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
      const result = stack.model.requests.at(-1)!.toolResults.find((r) => r.toolUseId === 'tu_help')!;
      assert.equal(result.isError, false, result.content);
      const { output } = parseToolResult(result.content) as { output: string };
      assert.match(output, /usage: with_server\.py/);
      assert.match(output, /--server SERVERS/);
    },
  );
});

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix))
    .sort()
    .flatMap((name) => {
      const rel = prefix ? `${prefix}/${name}` : name;
      return statSync(join(dir, rel)).isDirectory() ? listFiles(dir, rel) : [rel];
    });
}
