import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bundleFiles } from '../../skills/bundle.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('POST /skills/from-mission/:missionId drafts a skill from a completed run', () => {
  let stack: TestStack;
  let key: string;
  let missionId: string;
  const tmp = mkdtempSync(join(tmpdir(), 'cadenza-promote-'));
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'promoter' });
    await stack.api.createSkill(key, skillMd({ name: 'investigator', tools: ['lab.lookup', 'lab.scan'], body: 'Investigate.' }));
    let scans = 0;
    stack.tools.on('scan', () => (++scans === 1 ? { status: 503, body: { error: 'scanner busy' } } : { body: { clean: true } }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_look', name: 'lab__lookup', input: { q: 'host-7' } },
            { id: 'tu_scan', name: 'lab__scan', input: { target: 'host-7' } },
          ],
        },
      },
      { reply: { toolUses: [{ id: 'tu_scan2', name: 'lab__scan', input: { target: 'host-7' } }] } },
      { reply: { text: 'host-7 is clean.' } },
    );
    ({ id: missionId } = await stack.api.startMission(key, { skill: 'investigator', objective: 'Check whether host-7 is compromised.' }));
    assert.equal((await stack.api.waitForEnd(key, missionId)).status, 'completed');
  });
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await stack.stop();
  });

  it('stores a draft with source promoted, linked to the mission, whose procedure says what ran, in what order, in parallel, and what failed', async () => {
    const res = await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, { key, body: {} });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.status, 'draft');
    assert.equal(res.body.source, 'promoted');
    assert.equal(res.body.missionId, missionId);
    assert.match(res.body.name, /^check-whether-host-7-is-compromised-/);

    const exported = await stack.api.request('GET', `/api/v1/skills/${res.body.id}/export`, { key });
    const md = exported.body as string;
    const parsed = parseSkillMd(md);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    assert.deepEqual(parsed.skill.spec.allowedTools, ['lab.lookup', 'lab.scan']);
    assert.match(md, /Check whether host-7 is compromised\./);
    assert.match(
      md,
      /1\. Call these 2 tools in parallel:\n {3}- `lab\.lookup` with `\{"q":"host-7"\}`\n {3}- `lab\.scan` .*it failed.*step 2 called it again/,
    );
    assert.match(md, /2\. Call `lab\.scan` with `\{"target":"host-7"\}`\.\n3\. Answer the objective/);

    const detail = await stack.api.request('GET', `/api/v1/skills/${res.body.id}`, { key });
    assert.equal(detail.body.missionId, missionId);
    assert.equal(detail.body.status, 'draft');

    const validator = process.env.SKILLS_REF;
    if (validator || process.env.CI === 'true') {
      const dir = join(tmp, res.body.name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'SKILL.md'), md);
      const run = spawnSync(validator!, ['validate', dir], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    }
  });

  it('proposes one eval case from the run in the draft’s evals/evals.json', async () => {
    const res = await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, { key, body: { name: 'with-a-case' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const bundle = await fetch(`${stack.url}/api/v1/skills/${res.body.id}/bundle`, { headers: { authorization: `Bearer ${key}` } });
    const file = (await bundleFiles(Buffer.from(await bundle.arrayBuffer()))).find((f) => f.path === 'evals/evals.json');
    assert.ok(file, 'the bundle holds evals/evals.json');
    const [proposed] = JSON.parse(Buffer.from(file.data).toString('utf8')).evals;
    assert.equal(proposed.prompt, 'Check whether host-7 is compromised.');
    assert.equal(proposed.expected_output, 'host-7 is clean.');
    assert.deepEqual(proposed.expectations.slice(0, 2), ['tool_called lab.lookup', 'tool_called lab.scan']);
  });

  it('takes a name and description, and answers 409 for a taken name, 404 for another user’s or a missing mission, 400 for a bad name', async () => {
    const named = await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, {
      key,
      body: { name: 'host-check', description: 'Checks a host for compromise.' },
    });
    assert.equal(named.status, 201, JSON.stringify(named.body));
    assert.equal(named.body.name, 'host-check');
    const again = await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, { key, body: { name: 'host-check' } });
    assert.equal(again.status, 409);
    const bad = await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, { key, body: { name: 'Host Check' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details.fields[0].field, 'name');
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'stranger' });
    assert.equal((await stack.api.request('POST', `/api/v1/skills/from-mission/${missionId}`, { key: other, body: {} })).status, 404);
    assert.equal((await stack.api.request('POST', '/api/v1/skills/from-mission/no-such-mission', { key, body: {} })).status, 404);
  });

  it('refuses a mission that has not completed with 409', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 30_000, body: {} }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_slow', name: 'lab__lookup', input: { q: 'slow' } }] } });
    const { id } = await stack.api.startMission(key, { skill: 'investigator', objective: 'Slow one.' });
    const res = await stack.api.request('POST', `/api/v1/skills/from-mission/${id}`, { key, body: {} });
    assert.equal(res.status, 409);
    assert.match(res.body.error.message, /completed/);
    await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key });
  });
});
