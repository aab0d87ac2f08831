import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { skillMd } from '../../testkit/test-stack.ts';

// The Agent Skills reference validator (`skills-ref` from PyPI), installed by scripts/test.sh as $SKILLS_REF.
const validator = process.env.SKILLS_REF;
const skip =
  validator || process.env.CI === 'true' ? false : 'SKILLS_REF is not set: run through scripts/test.sh, which installs skills-ref';
const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

function validate(dir: string) {
  if (!validator) throw new Error('SKILLS_REF is not set: scripts/test.sh installs the Agent Skills validator');
  const run = spawnSync(validator, ['validate', dir], { encoding: 'utf8', timeout: 60_000 });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

describe('the skills Cadenza ships and writes pass the Agent Skills reference validator', { skip }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'cadenza-skills-ref-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const folders = [
    root('demo/trip-weather-brief'),
    ...readdirSync(root('test/fixtures/discovery/skills')).map((d) => root(`test/fixtures/discovery/skills/${d}`)),
  ];
  for (const folder of folders) {
    it(`passes: ${folder.slice(root('').length)}`, () => {
      const { ok, output } = validate(folder);
      assert.ok(ok, output);
    });
  }

  it('passes: a SKILL.md written with every extension under metadata, as the test helper and the README write it', () => {
    const dir = join(tmp, 'every-extension');
    mkdirSync(dir);
    const md = skillMd({ name: 'every-extension', tools: ['lab.lookup'], maxTurns: 5, model: 'forte' }).replace(
      'metadata:\n',
      'metadata:\n  cadenza-triggers: |\n    one ask\n    another: with a colon\n  cadenza-scripts: |\n    - name: run\n      path: scripts/run.py\n',
    );
    writeFileSync(join(dir, 'SKILL.md'), md);
    const { ok, output } = validate(dir);
    assert.ok(ok, output);
  });

  it('refuses the older top-level form, which is why Cadenza no longer writes it', () => {
    const dir = join(tmp, 'older-form');
    mkdirSync(dir);
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: older-form\ndescription: d\nmodel: forte\nmax-turns: 3\n---\nSteps.\n');
    const { ok, output } = validate(dir);
    assert.equal(ok, false);
    assert.match(output, /Unexpected fields in frontmatter: max-turns, model/);
  });
});
