import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileUserPattern, UserPatternError } from '../../lib/user-pattern.ts';
import { createInputSchemaCompiler } from '../../tools/app-schema.ts';

describe('user-supplied patterns (RE2)', () => {
  it('refuses a backreference or a lookaround with an error that names the pattern', () => {
    assert.throws(
      () => compileUserPattern('(x)\\1'),
      (err: unknown) => {
        assert.ok(err instanceof UserPatternError);
        assert.match(err.message, /^pattern "\(x\)\\\\1" is not supported \(.+\); patterns use RE2 syntax/);
        return true;
      },
    );
    assert.throws(() => compileUserPattern('(?<=a)b'), /pattern "\(\?<=a\)b" is not supported/);
  });

  it('checks JSON-Schema patterns of tool inputs with RE2: a backtracking pattern answers at once on 10,000 characters', () => {
    const validate = createInputSchemaCompiler()({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^(\\w|\\d)*$' }, word: { type: 'string', pattern: '^[a-z]+$' } },
      patternProperties: { '^x-(a|a)*$': { type: 'number' } },
    });
    const started = performance.now();
    assert.equal(validate({ code: `${'1'.repeat(9_999)}!` }), false);
    assert.equal(validate({ [`x-${'a'.repeat(9_998)}`]: 'not a number' }), false);
    console.log(`two backtracking patterns on 10,000 characters: ${(performance.now() - started).toFixed(1)} ms`);
    // Each pattern keeps its own meaning (Ajv keys compiled patterns by their text).
    assert.equal(validate({ code: 'abc123', word: 'abc', 'x-aa': 1 }), true);
    assert.equal(validate({ code: 'abc123', word: 'ABC' }), false);
    assert.match(JSON.stringify(validate.errors), /must match pattern \\"\^\[a-z\]\+\$\\"/);
  });
});
