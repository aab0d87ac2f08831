import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { importSkillMd } from '../../skills/skill-import.ts';
import { quoteColonScalars } from '../../skills/yaml-recovery.ts';
import { CORPUS_DIR, corpusManifest, corpusSkip } from '../../testkit/corpus.ts';

const md = (frontmatter: string, body = 'Do the thing.') => `---\n${frontmatter}\n---\n${body}\n`;
function imported(text: string, source = {}) {
  const result = importSkillMd(text, source);
  assert.ok(result.ok, JSON.stringify(result));
  return result;
}
const warned = (r: { warnings: Array<{ field: string; message: string }> }, field: string, message: RegExp) =>
  assert.ok(
    r.warnings.some((w) => w.field === field && message.test(w.message)),
    `no ${field} warning ${message} in ${JSON.stringify(r.warnings)}`,
  );

describe('importing the real-world corpus', () => {
  it('imports every skill folder of the corpus, each under its own name', { skip: corpusSkip() }, () => {
    const manifest = corpusManifest();
    assert.ok(manifest.length >= 9);
    for (const entry of manifest) {
      const text = readFileSync(new URL(`${entry.corpus_path}/SKILL.md`, CORPUS_DIR), 'utf8');
      const result = importSkillMd(text, { folder: entry.folder_name });
      assert.ok(result.ok, `${entry.corpus_path}: ${JSON.stringify(result)}`);
      assert.equal(result.skill.name, entry.name, entry.corpus_path);
      assert.ok(result.skill.description.length > 0 && result.skill.body.length > 0, entry.corpus_path);
      const nameWarning = result.warnings.some((w) => w.field === 'name');
      assert.equal(
        nameWarning,
        !entry.name_matches_folder,
        `${entry.corpus_path}: a name warning exactly when the name differs from the folder`,
      );
      const longWarning = result.warnings.some((w) => w.field === 'description');
      assert.equal(longWarning, entry.description_len > 1024, `${entry.corpus_path}: a length warning exactly when over 1024`);
    }
  });

  it('reads comma-separated allowed-tools of other agents as warnings, keeping none of them', { skip: corpusSkip() }, () => {
    corpusManifest();
    const text = readFileSync(new URL('getsentry-skills/django-perf-review/SKILL.md', CORPUS_DIR), 'utf8');
    const r = imported(text, { folder: 'django-perf-review' });
    warned(r, 'allowed-tools', /comma-separated/);
    warned(r, 'allowed-tools', /'Read' is not a Cadenza tool/);
    assert.deepEqual(r.skill.spec.allowedTools, []);
  });
});

describe('importSkillMd (lenient)', () => {
  it('warns on a name that differs from its folder and keeps the name', () => {
    const r = imported(md('name: alpha\ndescription: d'), { folder: 'beta' });
    assert.equal(r.skill.name, 'alpha');
    warned(r, 'name', /differs from its folder 'beta'/);
  });

  it('falls back on the folder for a missing or invalid name', () => {
    assert.equal(imported(md('description: d'), { folder: 'from-folder' }).skill.name, 'from-folder');
    const r = imported(md('name: My Great Skill\ndescription: d'));
    assert.equal(r.skill.name, 'my-great-skill');
    warned(r, 'name', /not a valid skill name; using 'my-great-skill'/);
  });

  it('keeps an over-long description whole, with a warning', () => {
    const r = imported(md(`name: long\ndescription: ${'x'.repeat(1100)}`));
    assert.equal(r.skill.description.length, 1100);
    warned(r, 'description', /1100 characters, over the specification's 1024/);
  });

  it('warns on unknown keys and keeps them in the frontmatter', () => {
    const r = imported(md('name: extra\ndescription: d\nargument-hint: "[file]"\nmax_turns: 4'));
    warned(r, 'argument-hint', /unknown field/);
    warned(r, 'max_turns', /did you mean 'max-turns'/);
    assert.equal(r.skill.frontmatter['argument-hint'], '[file]');
  });

  it('reads allowed-tools given as a list or comma-separated into the spec', () => {
    const list = imported(md('name: l\ndescription: d\nallowed-tools:\n  - lab.lookup\n  - lab.scan'));
    warned(list, 'allowed-tools', /YAML list/);
    assert.deepEqual(list.skill.spec.allowedTools, ['lab.lookup', 'lab.scan']);
    const commas = imported(md('name: c\ndescription: d\nallowed-tools: lab.lookup, lab.scan'));
    warned(commas, 'allowed-tools', /comma-separated/);
    assert.deepEqual(commas.skill.spec.allowedTools, ['lab.lookup', 'lab.scan']);
  });

  it('drops invalid optional fields with a warning instead of refusing', () => {
    const r = imported(md('name: odd\ndescription: d\nmodel: opus\nmax-turns: lots\nmetadata:\n  version: 1.5\ntriggers: plan my trip'));
    warned(r, 'model', /minuet, allegro, forte/);
    warned(r, 'max-turns', /integer/);
    warned(r, 'metadata', /'version' is not a string; read as '1.5'/);
    assert.equal(r.skill.spec.tier, 'allegro', 'an unusable tier never reaches the mission engine: the spec has the default');
    assert.equal('maxTurns' in r.skill.spec, false);
    assert.deepEqual(r.skill.metadata, { version: '1.5' });
    assert.deepEqual(r.skill.spec.triggers, ['plan my trip']);
  });

  it('reads the skills a skill may delegate to, as strict authoring does; a bad name is a warning', () => {
    const ok = imported(md('name: boss\ndescription: d\nmetadata:\n  cadenza-delegates: "helper scout helper"'));
    assert.deepEqual(ok.skill.spec.delegates, ['helper', 'scout']);
    const bad = imported(md('name: boss\ndescription: d\nmetadata:\n  cadenza-delegates: "helper Not_A_Name"'));
    warned(bad, 'metadata.cadenza-delegates', /'Not_A_Name' is not a skill name/);
    assert.equal('delegates' in bad.skill.spec, false);
  });

  it("recovers an unquoted ': ' inside a plain value by quoting it and reading again", () => {
    const r = imported(md('name: colon\ndescription: Use when: the user asks for a plan # a comment\nlicense: MIT'));
    assert.equal(r.skill.description, 'Use when: the user asks for a plan');
    assert.equal(r.skill.license, 'MIT');
    warned(r, 'description', /unquoted ': '/);
  });

  it('refuses what stays unparseable, and a skill without a description', () => {
    const broken = importSkillMd(md('name: broken\ndescription: [unclosed'));
    assert.ok(!broken.ok);
    assert.equal(broken.errors[0]?.field, 'frontmatter');
    for (const text of [md('name: nodesc'), md('name: blank\ndescription: "  "'), 'no frontmatter at all\n']) {
      const r = importSkillMd(text);
      assert.ok(!r.ok, text);
      assert.ok(['description', 'frontmatter'].includes(r.errors[0]!.field), JSON.stringify(r.errors));
    }
  });

  it('keeps declared scripts whose files are in the bundle and drops the others, with a warning', () => {
    const text = md('name: s\ndescription: d\nscripts:\n  - {name: run, path: scripts/run.py}\n  - {name: gone, path: scripts/gone.py}');
    const r = imported(text, { files: ['SKILL.md', 'scripts/run.py'] });
    assert.deepEqual(r.skill.spec.scripts, [{ name: 'run', path: 'scripts/run.py' }]);
    warned(r, 'scripts', /'scripts\/gone\.py' is not in the bundle/);
  });
});

describe('quoteColonScalars', () => {
  it('quotes only plain scalars holding a colon, leaving quoted, block and nested values alone', () => {
    const yaml = ['name: x', 'description: a: b', "quoted: 'a: b'", 'block: |', '  text: with: colons', 'url: http://example.com'].join(
      '\n',
    );
    const { yaml: out, keys } = quoteColonScalars(yaml);
    assert.deepEqual(keys, ['description']);
    assert.equal(out.split('\n')[1], 'description: "a: b"');
    assert.equal(out.split('\n')[2], "quoted: 'a: b'");
    assert.equal(out.split('\n')[4], '  text: with: colons', 'block scalar text is left as written');
  });
});
