import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { importSkillMd } from '../../skills/skill-import.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';

const md = (frontmatter: string) => `---\nname: ext\ndescription: Extensions.\n${frontmatter}\n---\nDo it.\n`;
const fields = (text: string, source = {}) => {
  const r = parseSkillMd(text, source);
  assert.ok(!r.ok, 'expected the skill to be rejected');
  return r.errors;
};

describe("parseSkillMd: Cadenza's extensions, strictly", () => {
  it('parses triggers, not_for and scripts whose files are in the bundle', () => {
    const text = md(
      'triggers:\n  - plan a trip\nnot_for:\n  - book a flight\nscripts:\n  - name: fetch_data\n    path: scripts/fetch.py\n    description: Fetches.',
    );
    const r = parseSkillMd(text, { files: ['SKILL.md', 'scripts/fetch.py'] });
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.skill.spec.triggers, ['plan a trip']);
    assert.deepEqual(r.skill.spec.notFor, ['book a flight']);
    assert.deepEqual(r.skill.spec.scripts, [{ name: 'fetch_data', path: 'scripts/fetch.py', description: 'Fetches.' }]);
  });

  it('reads metadata.cadenza-delegates as skill names and refuses one that is not a skill name', () => {
    const r = parseSkillMd(md('metadata:\n  cadenza-delegates: "researcher  writer researcher"'));
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.skill.spec.delegates, ['researcher', 'writer']);
    const none = parseSkillMd(md('metadata:\n  cadenza-session: "false"'));
    assert.ok(none.ok && none.skill.spec.delegates === undefined, 'no delegates: the tool is not offered');
    assert.deepEqual(
      fields(md('metadata:\n  cadenza-delegates: "Writer"')).map((e) => [e.field, e.message]),
      [['metadata.cadenza-delegates', "'Writer' is not a skill name"]],
    );
  });

  const bad: Array<[string, string, RegExp]> = [
    ['triggers', 'triggers: plan a trip', /list of example asks/],
    ['triggers', 'triggers:\n  - ""', /must not be empty/],
    ['not_for', 'not_for:\n  - 42', /must be a string/],
    ['scripts', 'scripts:\n  - name: Fetch\n    path: scripts/f.py', /a-z, 0-9, _/],
    ['scripts', 'scripts:\n  - name: f\n    path: ../f.py', /relative path inside the bundle/],
    ['scripts', 'scripts:\n  - name: f\n    path: /etc/f.py', /is absolute/],
    ['scripts', 'scripts:\n  - name: f\n    path: f.py\n    runner: bash', /runner/],
    ['scripts', 'scripts:\n  - {name: f, path: a.py}\n  - {name: f, path: b.py}', /declared twice/],
  ];
  for (const [field, frontmatter, message] of bad) {
    it(`names \`${field}\` for ${JSON.stringify(frontmatter)}`, () => {
      const errors = fields(md(frontmatter), { files: ['SKILL.md', 'a.py', 'b.py', 'f.py'] });
      assert.deepEqual(
        errors.map((e) => e.field),
        [field],
        JSON.stringify(errors),
      );
      assert.match(errors[0]!.message, message);
    });
  }

  it('names `scripts` for a script the bundle lacks, and for any script of a bare SKILL.md', () => {
    const text = md('scripts:\n  - {name: f, path: scripts/f.py}');
    assert.match(fields(text, { files: ['SKILL.md'] })[0]!.message, /'scripts\/f\.py' \(f\) is not in the bundle/);
    assert.match(fields(text)[0]!.message, /needs a bundle/);
  });

  it("names `name` when it differs from its folder's name", () => {
    const errors = fields(md(''), { folder: 'other' });
    assert.deepEqual(errors, [{ field: 'name', message: "must equal its folder's name 'other'" }]);
  });

  it("refuses the reserved name 'auto'", () => {
    assert.match(fields('---\nname: auto\ndescription: d\n---\nx\n')[0]!.message, /reserved/);
  });

  it('names a misspelt not_for', () => {
    assert.match(fields(md('not-for:\n  - x'))[0]!.message, /did you mean 'not_for'/);
  });
});

describe("Cadenza's extensions under metadata (the interoperable form)", () => {
  const meta = (lines: string) => md(`metadata:\n${lines}`);

  it('reads asks one per line (blank lines dropped), quoted turn limits and scripts as a YAML list', () => {
    const r = parseSkillMd(
      meta(
        '  cadenza-max-turns: "9"\n  cadenza-triggers: |\n    plan a trip\n\n    pack for: rain\n  cadenza-scripts: |\n    - {name: f, path: f.py}',
      ),
      { files: ['SKILL.md', 'f.py'] },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.skill.spec.maxTurns, 9);
    assert.deepEqual(r.skill.spec.triggers, ['plan a trip', 'pack for: rain']);
    assert.deepEqual(r.skill.spec.scripts, [{ name: 'f', path: 'f.py' }]);
    assert.deepEqual(r.warnings, []);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['metadata.cadenza-max-turns', '  cadenza-max-turns: "many"', /integer from 1 to 50/],
    ['metadata.cadenza-scripts', '  cadenza-scripts: "[unclosed"', /must hold a YAML list.*invalid YAML/],
    ['metadata.cadenza-scripts', '  cadenza-scripts: |\n    - {name: f, path: ../f.py}', /relative path inside the bundle/],
    ['metadata.cadenza-not-for', '  cadenza-not-for: book a flight', /did you mean 'cadenza-not_for'/],
    ['metadata.cadenza-colour', '  cadenza-colour: blue', /Cadenza's keys are cadenza-model, cadenza-max-turns/],
    ['metadata', '  cadenza-max-turns: 9', /must be a string \(quote numbers/],
  ];
  for (const [field, lines, message] of bad) {
    it(`names \`${field}\` for ${JSON.stringify(lines.trim())}`, () => {
      const errors = fields(meta(lines), { files: ['SKILL.md', 'f.py'] });
      assert.deepEqual(
        errors.map((e) => e.field),
        [field],
        JSON.stringify(errors),
      );
      assert.match(errors[0]!.message, message);
    });
  }

  it('reads the metadata form on import too, warning (not refusing) for an unknown cadenza- key', () => {
    const r = importSkillMd(meta('  cadenza-model: forte\n  cadenza-max-turns: 4\n  cadenza-colour: blue'));
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.skill.spec.tier, 'forte');
    assert.equal(r.skill.spec.maxTurns, 4, 'an unquoted number is read, with a warning on metadata');
    assert.deepEqual(
      r.warnings.map((w) => w.field),
      ['metadata', 'metadata.cadenza-colour'],
    );
  });
});
