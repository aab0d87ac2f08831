import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, runCliInTerminal } from '../helpers/cli-process.ts';
import type { EvalRunEvent } from '../../contracts/evals.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import type { SseFrame } from '../../testkit/api-client.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

const md = (body: string) => ['---', 'name: finder', 'description: Finds things.', 'allowed-tools: lab.lookup', '---', body, ''].join('\n');
const EVALS = {
  evals: [
    { id: 1, prompt: 'Look up the key', expectations: ['tool_called lab.lookup', 'output contains "Found"'] },
    { id: 2, prompt: 'Look up the door', expectations: ['output contains "Found"'] },
  ],
};
const eventsOf = (frames: SseFrame[]) => frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data!) as EvalRunEvent);

/**
 * An eval run's progress over SSE, on the real stack: its missions wait on a lookup the test releases, so a client can
 * drop the stream mid-run and resume it with Last-Event-ID. Without the procedure the fake model answers "Not found".
 */
describe('eval run events (SSE)', () => {
  let stack: TestStack;
  let key: string;
  let skillId: string;
  let release: () => void = () => {};
  const gate = new Promise<void>((ok) => (release = ok));
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    stack.tools.on('lookup', () => gate.then(() => ({ body: { found: true } })));
    stack.model.setHandler((req) => {
      if (req.toolResults.length === 0) return { reply: { toolUses: [{ name: 'lab__lookup', input: { q: req.lastUserText } }] } };
      return { reply: { text: req.system.includes('PROCEDURE') ? 'Found it.' : 'Not found.' } };
    });
  });
  after(() => stack.stop());

  /** Uploads the skill's folder with this procedure: a new skill, or a new version of it. */
  const upload = (path: string, body: string) =>
    fetch(`${stack.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: new Uint8Array(
        buildZip([
          { path: 'finder/SKILL.md', data: md(body) },
          { path: 'finder/evals/evals.json', data: JSON.stringify(EVALS) },
        ]),
      ),
    }).then(async (res) => (await res.json()) as { id: string; version: number });
  const cliEnv = () => ({
    CADENZA_URL: stack.url,
    CADENZA_API_KEY: key,
    CADENZA_ADMIN_KEY: '',
    XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'cadenza-cli-')),
  });

  it('streams units started, finished and graded, the figures and the end; resumes with Last-Event-ID; 404 for others', async () => {
    skillId = (await upload('/api/v1/skills', 'PROCEDURE: look it up.')).id;
    const started = await stack.api.request('POST', `/api/v1/skills/${skillId}/evals`, {
      key,
      body: { version: 1, against: 'none', maxCostUsd: 10 },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const path = `/api/v1/eval-runs/${started.body.evalRunId}/events`;

    // One client watches from the start to the end; another drops the stream once every unit has started.
    const watcher = stack.api.readEvents(key, '', { path });
    const dropped = await stack.api.readEvents(key, '', { path, stopAfter: 5 });
    const first = eventsOf(dropped.frames);
    assert.deepEqual(
      first.map((e) => e.type),
      ['run_status', 'unit_started', 'unit_started', 'unit_started', 'unit_started'],
    );
    const run = await stack.api.request('GET', `/api/v1/eval-runs/${started.body.evalRunId}`, { key });
    assert.equal(run.body.status, 'running', 'dropped mid-run: every mission waits on its lookup');
    release();
    const resumed = await stack.api.readEvents(key, '', { path, lastEventId: '5' });
    assert.equal(resumed.status, 200);
    const whole = eventsOf((await watcher).frames);

    assert.deepEqual([...first, ...eventsOf(resumed.frames)], whole, 'the resumed stream misses nothing and repeats nothing');
    assert.deepEqual(
      whole.map((e) => e.seq),
      whole.map((_, i) => i + 1),
    );
    const count = (type: string) => whole.filter((e) => e.type === type).length;
    assert.deepEqual([count('unit_started'), count('unit_finished'), count('unit_graded')], [4, 4, 4]);
    const graded = whole.filter((e): e is Extract<EvalRunEvent, { type: 'unit_graded' }> => e.type === 'unit_graded');
    assert.deepEqual(graded.map((e) => `${e.caseId}/${e.side}:${e.status}`).sort(), [
      '1/baseline:failed',
      '1/candidate:passed',
      '2/baseline:failed',
      '2/candidate:passed',
    ]);
    const [summary, end] = whole.slice(-2);
    assert.equal(end!.type === 'run_status' && end!.status, 'completed', 'the stream ends with the terminal status');
    assert.ok(summary?.type === 'run_summary');
    assert.deepEqual([summary.candidate.passRate, summary.baseline.passRate, summary.delta.passRate], [1, 0, 1]);

    // An ended run's stream replays its log and closes.
    const again = eventsOf((await stack.api.readEvents(key, '', { path })).frames);
    assert.deepEqual(again, whole);
    const stranger = await stack.api.newKey();
    assert.equal((await stack.api.readEvents(stranger, '', { path })).status, 404, "someone else's run is not found");
    const missing = `/api/v1/eval-runs/${crypto.randomUUID()}/events`;
    assert.equal((await stack.api.readEvents(key, '', { path: missing })).status, 404);
    await until(() =>
      stack.api.request('GET', `/api/v1/eval-runs/${started.body.evalRunId}`, { key }).then((r) => r.body.status === 'completed'),
    );
  });

  it('the CLI without a terminal prints a line per finished unit, then the case table and the figures', async () => {
    const cli = await runCli(['skills', 'eval', skillId, '--version', '1', '--against', 'none', '--cases', '1'], cliEnv());
    assert.equal(cli.code, 0, cli.stderr);
    const lines = cli.stdout.split('\n');
    const units = lines.filter((l) => l.startsWith('case 1 repeat 1 '));
    assert.deepEqual(units.map((l) => l.replace(/ \(\$.*\)$/, '')).sort(), [
      'case 1 repeat 1 baseline: failed',
      'case 1 repeat 1 candidate: passed',
    ]);
    assert.ok(lines.indexOf(units.at(-1)!) < lines.findIndex((l) => /^CASE\s+REPEAT/.test(l)), 'the unit lines come before the table');
    assert.match(cli.stdout, /delta: 1 ± 0/);
    assert.doesNotMatch(cli.stdout, /\x1b\[/, 'no redraws without a terminal');
  });

  it('the CLI at a terminal redraws the case table as units move, then prints the final one; exit 1 on a regression', async () => {
    await upload(`/api/v1/skills/${skillId}/versions`, 'Answer from memory.');
    const term = runCliInTerminal(['skills', 'eval', skillId, '--version', '2', '--against', '1'], cliEnv());
    const code = await term.done;
    const out = term.output();
    assert.equal(code, 1, out);
    assert.match(out, /CASE\s+REPEAT\s+CANDIDATE\s+BASELINE\r?\n/, 'the live table (no failing column)');
    assert.match(out, /[12]\s+1\s+(running|grading)\s+(running|grading|pending|passed)/, 'a unit shown while it ran');
    assert.match(out, /\x1b\[\d+A\r\x1b\[J/, 'the table redrawn in place');
    assert.match(out, /CASE\s+REPEAT\s+CANDIDATE\s+BASELINE\s+FAILING/);
    assert.match(out, /1\s+1\s+failed\s+passed\s+output contains "Found"/);
    assert.match(out, /delta: -1 ± 0/);
  });
});
