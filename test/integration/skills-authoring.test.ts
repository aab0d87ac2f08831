import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { folderZip, skillsHttp } from '../helpers/skills-http.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

type Field = { field: string; message: string };

describe('strict authoring: every problem in one 400, extensions under metadata, warnings for the rest', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'author' });
  });
  after(() => stack.stop());
  const { post, get, bytesOf, counts } = skillsHttp(
    () => stack,
    () => key,
  );

  it('reports an uninstalled tool, an unknown tier and an out-of-range max-turns at once (metadata form)', async () => {
    const md = [
      '---',
      'name: three-problems',
      'description: Has three problems.',
      'allowed-tools: lab.lookup lab.nope',
      'metadata:',
      '  cadenza-model: enormous',
      '  cadenza-max-turns: "99"',
      '---',
      'Steps.',
      '',
    ].join('\n');
    const before = await counts();
    const res = await post('', { md });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const fields: Field[] = res.body.error.details.fields;
    assert.deepEqual(fields.map((f) => f.field).sort(), ['allowed-tools', 'metadata.cadenza-max-turns', 'metadata.cadenza-model']);
    assert.match(fields.find((f) => f.field === 'allowed-tools')!.message, /'lab\.nope' is not an installed tool/);
    assert.match(fields.find((f) => f.field === 'metadata.cadenza-model')!.message, /minuet, allegro, forte/);
    assert.match(fields.find((f) => f.field === 'metadata.cadenza-max-turns')!.message, /integer from 1 to 50/);
    assert.deepEqual(await counts(), before, 'nothing stored');
  });

  it('reports the same three at once in the older top-level form', async () => {
    const md = '---\nname: three-top\ndescription: d\nallowed-tools: lab.nope\nmodel: enormous\nmax-turns: 0\n---\nSteps.\n';
    const res = await post('', { md });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.error.details.fields.map((f: Field) => f.field).sort(), ['allowed-tools', 'max-turns', 'model']);
  });

  it('reads every extension from metadata text: tier, turns, asks one per line, scripts as a YAML list, approval', async () => {
    const md = [
      '---',
      'name: full-metadata',
      'description: Every Cadenza extension, written the interoperable way.',
      'allowed-tools: lab.lookup lab.scan',
      'metadata:',
      '  author: ana',
      '  cadenza-model: forte',
      '  cadenza-max-turns: "6"',
      '  cadenza-triggers: |',
      '    check the lab results',
      '    scan the sample: is it clean',
      '  cadenza-not_for: |',
      '    book a flight',
      '  cadenza-scripts: |',
      '    - name: summarise',
      '      path: scripts/summarise.py',
      '      description: Summarises a report.',
      '  cadenza-approval: lab.scan',
      '---',
      'Steps.',
      '',
    ].join('\n');
    const res = await post('', { zip: folderZip('full-metadata', { 'SKILL.md': md, 'scripts/summarise.py': 'print(1)\n' }) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.warnings, []);
    const detail = await get(`/${res.body.id}`);
    assert.deepEqual(detail.body.spec, {
      tier: 'forte',
      allowedTools: ['lab.lookup', 'lab.scan'],
      maxTurns: 6,
      triggers: ['check the lab results', 'scan the sample: is it clean'],
      notFor: ['book a flight'],
      scripts: [{ name: 'summarise', path: 'scripts/summarise.py', description: 'Summarises a report.' }],
      approval: ['lab.scan'],
    });
    const found = await get(`/discover?q=${encodeURIComponent('check the lab results')}`);
    assert.equal(found.body.items[0]?.name, 'full-metadata', 'metadata triggers feed discovery');

    // The exported bytes pass the Agent Skills reference validator (installed by scripts/test.sh as $SKILLS_REF).
    const exported = await bytesOf(`/${res.body.id}/export`);
    assert.equal(exported.status, 200);
    if (process.env.SKILLS_REF || process.env.CI === 'true') {
      const dir = mkdtempSync(join(tmpdir(), 'cadenza-export-'));
      try {
        mkdirSync(join(dir, 'full-metadata'));
        writeFileSync(join(dir, 'full-metadata', 'SKILL.md'), exported.bytes);
        const run = spawnSync(process.env.SKILLS_REF ?? 'agentskills', ['validate', join(dir, 'full-metadata')], { encoding: 'utf8' });
        assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('accepts extensions at the top level and unknown top-level keys, warning about each', async () => {
    const md = '---\nname: older-form\ndescription: d\nmodel: minuet\nmax-turns: 3\nargument-hint: "[file]"\n---\nSteps.\n';
    const res = await post('', { md });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const warnings: Field[] = res.body.warnings;
    assert.deepEqual(warnings.map((w) => w.field).sort(), ['argument-hint', 'max-turns', 'model']);
    assert.match(warnings.find((w) => w.field === 'model')!.message, /under metadata as cadenza-model/);
    assert.match(warnings.find((w) => w.field === 'argument-hint')!.message, /unknown field/);
    const detail = await get(`/${res.body.id}`);
    assert.equal(detail.body.spec.tier, 'minuet');
    assert.equal(detail.body.spec.maxTurns, 3);
    assert.deepEqual(detail.body.warnings, warnings, 'the warnings are stored with the version');
  });

  it('refuses an unknown cadenza- key, an extension given both ways, and approval of a tool the skill does not allow', async () => {
    const md = [
      '---',
      'name: confused',
      'description: d',
      'allowed-tools: lab.lookup',
      'model: forte',
      'metadata:',
      '  cadenza-max_turns: "3"',
      '  cadenza-model: forte',
      '  cadenza-approval: lab.scan',
      '---',
      'Steps.',
      '',
    ].join('\n');
    const res = await post('', { md });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const fields: Field[] = res.body.error.details.fields;
    assert.deepEqual(fields.map((f) => f.field).sort(), ['metadata.cadenza-approval', 'metadata.cadenza-max_turns', 'model']);
    assert.match(fields.find((f) => f.field === 'metadata.cadenza-max_turns')!.message, /did you mean 'cadenza-max-turns'/);
    assert.match(fields.find((f) => f.field === 'model')!.message, /given twice/);
    assert.match(fields.find((f) => f.field === 'metadata.cadenza-approval')!.message, /'lab\.scan' is not in allowed-tools/);
  });

  it('imports the top-level form leniently, warning that the specification puts it under metadata', async () => {
    const md = '---\nname: imported-older\ndescription: d\nmodel: forte\ntriggers:\n  - plan a trip\n---\nSteps.\n';
    const res = await post('/import', { md });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const warnings: Field[] = res.body.warnings;
    assert.match(warnings.find((w) => w.field === 'model')!.message, /under metadata as cadenza-model/);
    assert.match(warnings.find((w) => w.field === 'triggers')!.message, /under metadata as cadenza-triggers/);
    const detail = await get(`/${res.body.id}`);
    assert.equal(detail.body.spec.tier, 'forte');
    assert.deepEqual(detail.body.spec.triggers, ['plan a trip']);
  });
});
