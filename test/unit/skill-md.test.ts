import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSkillMd, type SkillFieldError } from '../../skills/skill-md.ts';

const BODY = '# Plan a trip\n\n1. Check the forecast.\n2. Check alerts.';

function skillMd(frontmatter: string, body = BODY): string {
  return `---\n${frontmatter}\n---\n\n${body}\n`;
}

const minimal = 'name: trip-planner\ndescription: Plans a day out around the weather.';

function errorsOf(text: string): SkillFieldError[] {
  const result = parseSkillMd(text);
  assert.ok(!result.ok, 'expected the skill to be rejected');
  return result.errors;
}

describe('parseSkillMd', () => {
  it('parses a complete skill', () => {
    const result = parseSkillMd(
      skillMd(
        `${minimal}\nallowed-tools: weather.get_forecast weather.get_alerts\nmodel: forte\nmax-turns: 12\n` +
          'license: MIT\nmetadata:\n  author: ana\n  version: "1.0"\nargument-hint: "[city]"',
      ),
    );
    assert.ok(result.ok);
    const { frontmatter, ...skill } = result.skill;
    assert.deepEqual(skill, {
      name: 'trip-planner',
      description: 'Plans a day out around the weather.',
      spec: {
        tier: 'forte',
        allowedTools: ['weather.get_forecast', 'weather.get_alerts'],
        maxTurns: 12,
        triggers: [],
        notFor: [],
        scripts: [],
        approval: [],
      },
      license: 'MIT',
      metadata: { author: 'ana', version: '1.0' },
      body: BODY,
    });
    assert.equal(frontmatter['argument-hint'], '[city]', 'unknown fields are kept in the raw frontmatter');
    assert.deepEqual(
      result.warnings.map((w) => w.field),
      ['model', 'max-turns', 'argument-hint'],
      'top-level extensions and unknown keys are warnings',
    );
  });

  it('leaves optional fields out of a minimal skill', () => {
    const result = parseSkillMd(skillMd(minimal));
    assert.ok(result.ok);
    assert.deepEqual(result.skill.spec.allowedTools, []);
    assert.equal(result.skill.spec.tier, 'allegro', 'the default tier');
    assert.equal('maxTurns' in result.skill.spec, false);
  });

  it('accepts allowed-tools as a YAML list', () => {
    const result = parseSkillMd(skillMd(`${minimal}\nallowed-tools:\n  - weather.get_forecast\n  - memory.search`));
    assert.ok(result.ok);
    assert.deepEqual(result.skill.spec.allowedTools, ['weather.get_forecast', 'memory.search']);
  });

  it('handles CRLF line endings and a UTF-8 BOM', () => {
    const text = '\uFEFF' + skillMd(`${minimal}\nallowed-tools: weather.get_forecast`).replaceAll('\n', '\r\n');
    const result = parseSkillMd(text);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.skill.name, 'trip-planner');
    assert.deepEqual(result.skill.spec.allowedTools, ['weather.get_forecast']);
    assert.equal(result.skill.body, BODY);
  });

  const badFields: Array<[string, string, string, RegExp?]> = [
    ['name', 'name with capitals', 'name: Trip-Planner\ndescription: d'],
    ['name', 'name with a double hyphen', 'name: trip--planner\ndescription: d'],
    ['name', 'name with a leading hyphen', 'name: -trip\ndescription: d'],
    ['name', 'name over 64 characters', `name: ${'a'.repeat(65)}\ndescription: d`],
    ['name', 'missing name', 'description: d', /is required/],
    ['description', 'missing description', 'name: trip', /is required/],
    ['description', 'empty description', 'name: trip\ndescription: ""'],
    ['description', 'description over 1024 characters', `name: trip\ndescription: ${'d'.repeat(1025)}`],
    ['allowed-tools', 'a malformed tool entry', `${minimal}\nallowed-tools: weather.get_forecast Weather.alerts`, /'Weather\.alerts'/],
    ['allowed-tools', 'comma-separated tools', `${minimal}\nallowed-tools: weather.get_forecast, weather.get_alerts`, /spaces, not commas/],
    ['allowed-tools', 'allowed-tools of the wrong type', `${minimal}\nallowed-tools: 42`],
    ['model', 'an unknown model tier', `${minimal}\nmodel: presto`, /minuet, allegro, forte/],
    ['max-turns', 'max-turns of 0', `${minimal}\nmax-turns: 0`],
    ['max-turns', 'max-turns over 50', `${minimal}\nmax-turns: 51`],
    ['max-turns', 'a fractional max-turns', `${minimal}\nmax-turns: 2.5`],
    ['max-turns', 'max-turns as a string', `${minimal}\nmax-turns: "10"`],
    ['license', 'a non-string license', `${minimal}\nlicense: 42`],
    ['metadata', 'a non-string metadata value', `${minimal}\nmetadata:\n  version: 1.0`, /'version'/],
    ['max_turns', 'a misspelt field', `${minimal}\nmax_turns: 10`, /did you mean 'max-turns'/],
  ];
  for (const [field, what, frontmatter, message] of badFields) {
    it(`names the field \`${field}\` for ${what}`, () => {
      const errors = errorsOf(skillMd(frontmatter));
      assert.deepEqual(
        errors.map((e) => e.field),
        [field],
        JSON.stringify(errors),
      );
      if (message) assert.match(errors[0]?.message ?? '', message);
    });
  }

  it('reports several problems together', () => {
    const errors = errorsOf(skillMd('name: Bad Name\nmodel: presto\nmax-turns: 99', ''));
    assert.deepEqual(errors.map((e) => e.field).sort(), ['body', 'description', 'max-turns', 'model', 'name']);
  });

  it('requires frontmatter', () => {
    assert.deepEqual(
      errorsOf(`# Just a heading\n\n${BODY}`).map((e) => e.field),
      ['frontmatter'],
    );
  });

  it('requires the frontmatter to be closed', () => {
    const errors = errorsOf(`---\n${minimal}\n\n${BODY}`);
    assert.deepEqual(
      errors.map((e) => e.field),
      ['frontmatter'],
    );
    assert.match(errors[0]?.message ?? '', /not closed/);
  });

  it('names the line of a YAML error, counted from the top of the file', () => {
    const errors = errorsOf(skillMd(`${minimal}\nmodel: a: b`));
    assert.equal(errors[0]?.field, 'frontmatter');
    assert.match(errors[0]?.message ?? '', /invalid YAML at line 4/);
  });

  it('requires a non-empty body', () => {
    assert.deepEqual(
      errorsOf(skillMd(minimal, '  \n\n')).map((e) => e.field),
      ['body'],
    );
  });
});
