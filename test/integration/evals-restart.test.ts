import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { buildZip } from '../../testkit/zip-builder.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

const SKILL_MD = ['---', 'name: prober', 'description: Probes things.', 'allowed-tools: lab.scan', '---', 'Probe, then report.', ''].join(
  '\n',
);
const EVALS = {
  evals: [
    { id: 1, prompt: 'Quick one', expectations: ['output contains "done"', 'The report is clear'] },
    { id: 2, prompt: 'Quick two', expectations: ['output contains "done"'] },
    { id: 3, prompt: 'Slow probe', expectations: ['tool_called lab.scan'] },
  ],
};

/**
 * An eval run across a worker killed with SIGKILL while its last cases' missions wait on a tool: the new worker resumes
 * the run, and the cases that had finished are neither run nor graded again.
 */
describe('an eval run across a killed worker', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    let scans = 0;
    // Both sides of case 3 hang on their first scan; the calls the new worker makes answer.
    stack.tools.on('scan', () => (++scans <= 2 ? { hang: true } : { body: { found: 'probed' } }));
    stack.model.setHandler((req) => {
      if (req.system.startsWith('You grade'))
        return { reply: { text: '{"expectations": [{"index": 0, "passed": true, "reason": "clear"}]}' } };
      if (req.lastUserText.includes('Slow probe') && req.toolResults.length === 0)
        return { reply: { toolUses: [{ name: 'lab__scan', input: { target: 'x' } }] } };
      return { reply: { text: 'done' } };
    });
  });
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  it('resumes without running or grading a finished case again', async () => {
    const first = await workers.spawn(stack.env);
    const zip = buildZip([
      { path: 'prober/SKILL.md', data: SKILL_MD },
      { path: 'prober/evals/evals.json', data: JSON.stringify(EVALS) },
    ]);
    const created = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: new Uint8Array(zip),
    }).then((res) => res.json() as Promise<{ id: string }>);
    const started = await stack.api.request('POST', `/api/v1/skills/${created.id}/evals`, { key, body: { version: 1, maxCostUsd: 5 } });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const path = `/api/v1/eval-runs/${started.body.evalRunId}`;

    // Cases 1 and 2 graded on both sides, case 3's missions waiting on their scans: then the worker dies.
    await until(
      async () =>
        (await stack.api.request('GET', path, { key })).body.progress.graded === 4 &&
        stack.tools.requests.filter((r) => r.tool === 'scan').length === 2,
      { timeoutMs: 60_000, what: 'four graded units and two hanging scans' },
    );
    const asked = (prompt: string) => stack.model.requests.filter((r) => r.lastUserText.includes(prompt)).length;
    const before = { one: asked('Quick one'), two: asked('Quick two') };
    assert.notEqual(await first.kill('SIGKILL'), 0);
    await workers.spawn(stack.env);

    let run = (await stack.api.request('GET', path, { key })).body;
    await until(
      async () => {
        run = (await stack.api.request('GET', path, { key })).body;
        return run.status !== 'running';
      },
      { timeoutMs: 120_000, what: 'the eval run to end' },
    );
    assert.equal(run.status, 'completed');
    assert.equal(run.progress.graded, 6);
    assert.equal(run.candidate.passRate, 1);
    assert.deepEqual({ one: asked('Quick one'), two: asked('Quick two') }, before, 'no finished case was run or graded again');
    const missions = (await stack.api.request('GET', '/api/v1/missions?limit=100', { key })).body.items as unknown[];
    assert.equal(missions.length, 6, 'one mission per unit');
  });
});
