import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkOutput, compileOutputSchema, outputSchemaProblem } from '../../lib/output-schema.ts';
import { importSkillMd } from '../../skills/skill-import.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';
import { requestedSchema, sampleOf } from '../../fake-model/structured-output.ts';

const CITY = { type: 'object', required: ['city'], properties: { city: { type: 'string' }, rank: { type: 'integer', minimum: 1 } } };
const md = (value: string) => `---\nname: typed\ndescription: Typed.\nmetadata:\n  cadenza-output-schema: '${value}'\n---\nDo it.\n`;

describe('output schemas: checked when given, applied to answers', () => {
  it('accepts a JSON Schema of an object and names what is wrong with any other', () => {
    assert.equal(outputSchemaProblem(CITY), undefined);
    assert.match(outputSchemaProblem({ type: 'object', properties: { a: { type: 'strnig' } } })!, /not a valid JSON Schema/);
    assert.match(outputSchemaProblem({ type: 'object', required: 'city' })!, /not a valid JSON Schema/);
    assert.match(outputSchemaProblem({ type: 'array' })!, /must describe an object/);
    assert.match(outputSchemaProblem({ type: 'object', description: 'x'.repeat(20_000) })!, /at most 16384 characters/);
  });

  it('parses a matching answer (fenced or not), and says why another does not match', () => {
    const validate = compileOutputSchema(CITY);
    assert.deepEqual(checkOutput('{"city":"Oslo"}', validate), { ok: true, value: { city: 'Oslo' } });
    assert.deepEqual(checkOutput('```json\n{"city":"Oslo","rank":2}\n```', validate), { ok: true, value: { city: 'Oslo', rank: 2 } });
    assert.deepEqual(checkOutput('{"rank":0}', validate), {
      ok: false,
      errors: "/ must have required property 'city'; /rank must be >= 1",
    });
    const prose = checkOutput('Oslo, of course.', validate);
    assert.ok(!prose.ok && /^the answer is not JSON/.test(prose.errors), JSON.stringify(prose));
  });

  it('reads metadata.cadenza-output-schema strictly (refused with its field path) and leniently (dropped with a warning)', () => {
    const good = parseSkillMd(md(JSON.stringify(CITY)));
    assert.ok(good.ok, JSON.stringify(good));
    assert.deepEqual(good.skill.spec.outputSchema, CITY);
    for (const value of ['{"type":"object","properties":{"a":{"type":"strnig"}}}', '{type: object}']) {
      const strict = parseSkillMd(md(value));
      assert.ok(!strict.ok);
      assert.deepEqual(
        strict.errors.map((e) => e.field),
        ['metadata.cadenza-output-schema'],
      );
      const lenient = importSkillMd(md(value));
      assert.ok(lenient.ok, JSON.stringify(lenient));
      assert.equal(lenient.skill.spec.outputSchema, undefined);
      assert.deepEqual(
        lenient.warnings.map((w) => w.field),
        ['metadata.cadenza-output-schema'],
      );
    }
  });
});

describe('the fake model: structured outputs the way each API takes them', () => {
  it('reads the schema from either request form and refuses a malformed one as the API would', () => {
    assert.deepEqual(requestedSchema('anthropic', { output_config: { format: { type: 'json_schema', schema: CITY } } }), { schema: CITY });
    assert.ok('error' in requestedSchema('anthropic', { output_config: { format: { type: 'json', schema: CITY } } }));
    const openai = { response_format: { type: 'json_schema', json_schema: { name: 'mission_output', schema: CITY } } };
    assert.deepEqual(requestedSchema('openai', openai), { schema: CITY });
    assert.ok(
      'error' in requestedSchema('openai', { response_format: { type: 'json_schema', json_schema: { name: 'a b', schema: CITY } } }),
    );
    assert.deepEqual(requestedSchema('openai', { response_format: { type: 'text' } }), {});
  });

  it('answers, unscripted, a value that matches the schema', () => {
    const value = sampleOf(CITY);
    assert.deepEqual(value, { city: 'xxxx' });
    assert.ok(checkOutput(JSON.stringify(value), compileOutputSchema(CITY)).ok);
  });
});
