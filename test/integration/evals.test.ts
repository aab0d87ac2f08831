import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleFiles } from '../../skills/bundle.ts';
import { runCli } from '../helpers/cli-process.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

// Every token costs $0.001 on the missions' model and $0.1 on the grader's (minuet).
const PRICES = {
  'allegro-priced': { inputPerMTok: 1000, outputPerMTok: 1000 },
  'grader-priced': { inputPerMTok: 100_000, outputPerMTok: 100_000 },
};

const skillMd = (body: string) =>
  ['---', 'name: greeter', 'description: Greets guests and scans the lab.', 'allowed-tools: lab.scan', '---', body, ''].join('\n');
const GOOD = 'PROCEDURE-OK: greet the guest by name with "Hello".';
const BROKEN = 'PROCEDURE-BROKEN: answer tersely.';
const EVALS = {
  skill_name: 'greeter',
  evals: [
    {
      id: 1,
      prompt: 'Greet the guest',
      files: ['evals/files/guest.txt'],
      expectations: ['output contains "Hello Ada"', 'The greeting is warm'],
    },
    { id: 2, prompt: 'Scan the lab', stubs: { 'lab.scan': { level: 42 } }, expectations: ['tool_called lab.scan', 'output contains "42"'] },
    { id: 3, prompt: 'Say GARBAGE', expectations: ['The answer makes sense'] },
  ],
};
/** A response body as the API client reads it. */
type Body = Awaited<ReturnType<TestStack['api']['request']>>['body'];
/** One row of an eval run's case table. */
type CaseRow = {
  caseId: string;
  repeat: number;
  candidate: { status: string; reason?: string; mission: string | null; failing: Array<{ text: string; status: string; reason?: string }> };
  baseline: { status: string; reason?: string; mission: string | null; failing: Array<{ text: string; status: string; reason?: string }> };
};
const folder = (body: string, evals: unknown = EVALS) => [
  { path: 'greeter/SKILL.md', data: skillMd(body) },
  { path: 'greeter/evals/evals.json', data: typeof evals === 'string' ? evals : JSON.stringify(evals, null, 2) },
  { path: 'greeter/evals/files/guest.txt', data: 'Guest: Ada Lovelace' },
];

/**
 * Skill evals on the real stack with SKILL_ACTIVATION_REQUIRES_EVAL on. The fake model greets "Hello Ada" only when the
 * good procedure is in its system prompt, answers a scan from the tool's result, and as the grader answers JSON
 * verdicts (garbage for an answer saying GARBAGE).
 */
describe('skill evals', () => {
  let stack: TestStack;
  let key: string;
  /** The skill the gate test writes; the budget test runs its version 3. */
  let greeterId: string;
  before(async () => {
    stack = await startTestStack({
      env: {
        MODEL_TIER_ALLEGRO: 'allegro-priced',
        MODEL_TIER_MINUET: 'grader-priced',
        MODEL_PRICES: JSON.stringify(PRICES),
        SKILL_ACTIVATION_REQUIRES_EVAL: 'true',
        EVAL_MAX_REGRESSION: '0',
      },
    });
    key = await stack.api.newKey();
    stack.tools.on('lookup', () => ({ hang: true }));
    stack.model.setHandler((req) => {
      if (req.system.startsWith('You grade')) {
        const answer = /## Answer\n([\s\S]*?)\n\n## Tools called/.exec(req.lastUserText)?.[1] ?? '';
        if (answer.includes('GARBAGE')) return { reply: { text: 'I think it is fine!' } };
        return {
          reply: { text: JSON.stringify({ expectations: [{ index: 0, passed: answer.includes('Hello'), reason: 'read the greeting' }] }) },
        };
      }
      if (req.lastUserText.includes('Scan the lab')) {
        const [result] = req.toolResults;
        return { reply: result ? { text: `Scanned: ${result.content}` } : { toolUses: [{ name: 'lab__scan', input: { target: 'lab' } }] } };
      }
      if (req.lastUserText.includes('GARBAGE')) return { reply: { text: 'GARBAGE' } };
      if (req.lastUserText.includes('Wait for it') && req.toolResults.length === 0)
        return { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'slow' } }] } };
      return { reply: { text: req.system.includes('PROCEDURE-OK') ? 'Hello Ada, welcome!' : 'Hi.' } };
    });
  });
  after(() => stack.stop());

  const upload = (path: string, zip: Buffer) =>
    fetch(`${stack.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: new Uint8Array(zip),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Body }));
  const evalRun = async (skillId: string, body: Record<string, unknown>) => {
    const res = await stack.api.request('POST', `/api/v1/skills/${skillId}/evals`, { key, body: { maxCostUsd: 10_000, ...body } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    let run: Body;
    await until(
      async () => {
        run = (await stack.api.request('GET', `/api/v1/eval-runs/${res.body.evalRunId}`, { key })).body;
        return run.status !== 'running';
      },
      { timeoutMs: 120_000, what: 'the eval run to end' },
    );
    return run;
  };
  const activate = (id: string) => stack.api.request('POST', `/api/v1/skills/${id}/activate`, { key });

  it('evals.json: strict authoring refuses a bad field by its path, an import keeps it with warnings, the bundle keeps it verbatim', async () => {
    const bad = { skill_name: 'greeter', rubric: 'mine', evals: [EVALS.evals[0], { id: 9, files: ['evals/missing.txt'] }] };
    const refused = await upload('/api/v1/skills', buildZip(folder(GOOD, bad)));
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    const fields = refused.body.error.details.fields.map((f: { field: string }) => f.field);
    assert.ok(fields.includes('evals/evals.json: evals[1].prompt'), fields.join(', '));

    const text = JSON.stringify(bad, null, 2);
    const other = await stack.api.newKey();
    const imported = await fetch(`${stack.url}/api/v1/skills/import/zip`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'content-type': 'application/zip' },
      body: new Uint8Array(buildZip(folder(GOOD, text))),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Body }));
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const warned = imported.body.warnings.map((w: { field: string }) => w.field);
    assert.ok(warned.includes('evals/evals.json: rubric'), warned.join(', '));
    assert.ok(warned.includes('evals/evals.json: evals[1].prompt'), warned.join(', '));
    const bundle = await fetch(`${stack.url}/api/v1/skills/${imported.body.id}/bundle`, { headers: { authorization: `Bearer ${other}` } });
    const files = await bundleFiles(Buffer.from(await bundle.arrayBuffer()));
    assert.equal(Buffer.from(files.find((f) => f.path === 'evals/evals.json')!.data).toString('utf8'), text);
    // Someone else's skill is not found: its eval run cannot be started.
    const foreign = await stack.api.request('POST', `/api/v1/skills/${imported.body.id}/evals`, {
      key,
      body: { version: 1, maxCostUsd: 1 },
    });
    assert.equal(foreign.status, 404);
  });

  it('a broken version is refused activation by its eval run, a fixed one is activated', async () => {
    const created = await upload('/api/v1/skills', buildZip(folder(GOOD)));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    greeterId = id;
    const scans = stack.tools.requests.filter((r) => r.tool === 'scan').length;

    // Version 1 against no skill: the procedure is what makes case 1 pass; case 2's tool is stubbed; case 3's grader answers garbage.
    const first = await evalRun(id, { version: 1, against: 'none', repeats: 2 });
    assert.equal(first.status, 'completed');
    assert.deepEqual([first.candidate.passed, first.candidate.graded, first.baselineFigures.passed], [4, 6, 2]);
    assert.ok(first.delta.passRate > 0.33 && first.delta.passRate < 0.34, String(first.delta.passRate));
    assert.equal(first.delta.overRepeats.stddev, 0);
    assert.ok(first.candidate.costUsd > 0);
    const case1 = first.cases.find((c: CaseRow) => c.caseId === '1' && c.repeat === 1);
    assert.equal(case1.candidate.status, 'passed');
    assert.equal(case1.baseline.status, 'failed');
    assert.equal(case1.baseline.failing[0].text, 'output contains "Hello Ada"');
    assert.match(case1.baseline.failing[0].reason, /Hi\./);
    assert.match(case1.baseline.mission, /^\/api\/v1\/missions\//);
    const case3 = first.cases.find((c: CaseRow) => c.caseId === '3' && c.repeat === 1);
    assert.equal(case3.candidate.failing[0].status, 'error');
    assert.match(case3.candidate.failing[0].reason, /not the JSON/);
    assert.equal(stack.tools.requests.filter((r) => r.tool === 'scan').length, scans, 'a stubbed tool is never called');
    const baselinePrompt = stack.model.requests.find(
      (r) => r.lastUserText.includes('Greet the guest') && !r.system.startsWith('You grade') && !r.system.includes('PROCEDURE'),
    );
    assert.ok(baselinePrompt, 'the baseline runs without the procedure');
    assert.match(baselinePrompt.lastUserText, /Guest: Ada Lovelace/);

    const stranger = await stack.api.newKey();
    for (const path of [`/api/v1/eval-runs/${first.id}`, `/api/v1/eval-runs/${first.id}/benchmark.json`])
      assert.equal((await stack.api.request('GET', path, { key: stranger })).status, 404, "someone else's run is not found");
    const benchmark = await stack.api.request('GET', `/api/v1/eval-runs/${first.id}/benchmark.json`, { key });
    assert.equal(benchmark.status, 200);
    assert.equal(benchmark.body.metadata.runs_per_configuration, 2);
    assert.equal(benchmark.body.runs.length, 12);
    assert.ok(benchmark.body.run_summary.with_skill.pass_rate.mean > benchmark.body.run_summary.without_skill.pass_rate.mean);
    assert.match(benchmark.body.run_summary.delta.pass_rate, /^\+0\.\d\d$/);

    // Version 2 waits as a draft; without an eval run it is refused, and its eval run shows the regression.
    const v2 = await upload(`/api/v1/skills/${id}/versions`, buildZip(folder(BROKEN)));
    assert.deepEqual([v2.body.version, v2.body.draftVersion], [1, 2]);
    const unevaluated = await activate(id);
    assert.equal(unevaluated.status, 409);
    assert.match(unevaluated.body.error.message, /no finished eval run/);
    const second = await evalRun(id, { version: 2, cases: [1, 2] });
    assert.deepEqual(second.baseline, { kind: 'version', version: 1 });
    assert.equal(second.delta.passRate, -0.5);
    const refused = await activate(id);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, new RegExp(`eval run ${second.id}: delta -0.5`));

    const v3 = await upload(`/api/v1/skills/${id}/versions`, buildZip(folder(GOOD)));
    assert.equal(v3.body.draftVersion, 3);
    const third = await evalRun(id, { version: 3, cases: [1, 2] });
    assert.equal(third.delta.passRate, 0);
    const activated = await activate(id);
    assert.equal(activated.status, 200, JSON.stringify(activated.body));
    assert.equal(activated.body.version, 3);
  });

  it('the CLI runs an eval live, prints the case table and the delta, and exits 1 on a regression', async () => {
    const env = {
      CADENZA_URL: stack.url,
      CADENZA_API_KEY: key,
      CADENZA_ADMIN_KEY: '',
      XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'cadenza-cli-')),
    };
    const cli = await runCli(['skills', 'eval', greeterId, '--version', '2', '--against', 'active', '--cases', '1'], env);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stdout, /^CASE\s+REPEAT\s+CANDIDATE\s+BASELINE\s+FAILING/m);
    assert.match(cli.stdout, /1\s+1\s+failed\s+passed\s+output contains "Hello Ada"/);
    assert.match(cli.stdout, /delta: -1 ± 0/);
  });

  it('a run whose budget runs out ends budget_reached: the missions it started are graded, the rest not run', async () => {
    const run = await evalRun(greeterId, { version: 3, against: 'none', cases: [1, 2], repeats: 2, maxCostUsd: 0.000001 });
    assert.equal(run.status, 'budget_reached');
    assert.deepEqual([run.progress.graded, run.progress.notRun], [4, 4]);
    const notRun = run.cases.filter((c: CaseRow) => c.repeat === 2);
    assert.ok(notRun.every((c: CaseRow) => c.candidate.status === 'not_run' && /budget/.test(c.candidate.reason ?? '')));
  });

  it('the grader’s calls are charged to the run: reported apart from the sides, and spending its budget', async () => {
    // Case 1 has a prose expectation (one grader call per unit); 6 units in 4 lanes, so 2 start only if budget is left.
    const run = await evalRun(greeterId, { version: 3, against: 'none', cases: [1], repeats: 3, maxCostUsd: 40 });
    const graderCalls = stack.model.requests.filter((r) => r.system.startsWith('You grade') && r.lastUserText.includes('Greet the guest'));
    assert.ok(run.grading.costUsd > 0, JSON.stringify(run.grading));
    const missions = run.candidate.costUsd + run.baselineFigures.costUsd;
    assert.ok(missions < 40 && missions + run.grading.costUsd > 40, `missions $${missions}, grading $${run.grading.costUsd}`);
    assert.equal(run.status, 'budget_reached', 'the grader’s cost spent the budget the missions alone did not');
    assert.deepEqual([run.progress.graded, run.progress.notRun], [4, 2]);
    assert.ok(graderCalls.length >= 4);
  });

  it('cancelling a run cancels the missions it runs; they are marked not run', async () => {
    const md = ['---', 'name: waiter', 'description: Waits.', 'allowed-tools: lab.lookup', '---', 'Look it up.', ''].join('\n');
    const evals = { evals: [{ id: 'slow', prompt: 'Wait for it', expectations: ['tool_called lab.lookup'] }] };
    const created = await upload(
      '/api/v1/skills',
      buildZip([
        { path: 'waiter/SKILL.md', data: md },
        { path: 'waiter/evals/evals.json', data: JSON.stringify(evals) },
      ]),
    );
    const started = await stack.api.request('POST', `/api/v1/skills/${created.body.id}/evals`, {
      key,
      body: { version: 1, maxCostUsd: 1000 },
    });
    const path = `/api/v1/eval-runs/${started.body.evalRunId}`;
    // Both missions wait on their lookups (a budget too small would end them with a forced answer instead).
    await until(() => stack.tools.requests.filter((r) => r.tool === 'lookup').length === 2, { what: 'both missions waiting' });
    const cancelled = await stack.api.request('POST', `${path}/cancel`, { key });
    assert.equal(cancelled.status, 202);
    let run: Body;
    await until(async () => (run = (await stack.api.request('GET', path, { key })).body).status === 'cancelled', {
      what: 'the run cancelled',
    });
    const [row] = run!.cases as CaseRow[];
    for (const unit of [row!.candidate, row!.baseline]) {
      assert.equal(unit.status, 'not_run');
      const mission = await stack.api.waitForEnd(key, unit.mission!.split('/').at(-1)!);
      assert.equal(mission.status, 'cancelled');
    }
    assert.equal((await stack.api.request('POST', `${path}/cancel`, { key })).status, 409);
  });
});
