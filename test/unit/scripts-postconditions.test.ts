import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPostconditions, parsePostcondition } from '../../skill-scripts/postconditions.ts';

const output = {
  status: 'ok',
  rows: [
    { id: 7, name: 'Ada' },
    { id: 8, name: null },
  ],
  items: [{ id: 'a1' }],
  count: 3,
  tags: ['red', 'blue'],
  note: 'Report ready: 3 rows',
  'odd key': true,
};
const statusOf = (expression: string, value: unknown = output, isJson = true) => checkPostconditions([expression], value, isJson)[0]!;

describe('script postconditions', () => {
  it('passes what holds, with every operator', () => {
    for (const expression of [
      'rows.length > 0',
      'status == "ok"',
      'items[0].id != null',
      'count >= 3',
      'count <= 3',
      'count < 4',
      'rows[1].name == null',
      'tags contains "blue"',
      'note contains "ready"',
      'note matches "^Report ready: \\\\d+ rows$"',
      '["odd key"] == true',
      '$.count == 3',
      'status.length == 2',
    ]) {
      assert.equal(statusOf(expression).status, 'passed', expression);
    }
  });

  it('fails what does not hold, saying what the value was', () => {
    const check = statusOf('rows.length > 5');
    assert.equal(check.status, 'failed');
    assert.match(check.reason!, /rows\.length is 2/);
    assert.equal(statusOf('status != "ok"').status, 'failed');
    assert.equal(statusOf('tags contains "green"').status, 'failed');
    assert.equal(statusOf('count == "3"').status, 'failed', 'no coercion between a number and a string');
  });

  it('reports unverifiable, never passed, for a path that does not exist or a comparison that makes no sense', () => {
    for (const expression of [
      'missing == 1',
      'items[3].id != null',
      'rows.first == 1',
      'count contains "3"',
      'status > 3',
      'tags matches "red"',
    ]) {
      const check = statusOf(expression);
      assert.equal(check.status, 'unverifiable', expression);
      assert.ok(check.reason, expression);
    }
    assert.equal(statusOf('status == "ok"', 'plain text', false).status, 'unverifiable', 'text output verifies nothing');
  });

  it('reports unverifiable for what the grammar cannot express, and evaluates nothing', () => {
    for (const expression of [
      'process.exit(1)',
      'rows.length > 0 && status == "ok"',
      'rows.map(r => r.id) contains 7',
      'count == [1, 2]',
      'status == ok',
      '== 3',
      'note matches "(?=Report)"',
    ]) {
      const check = statusOf(expression);
      assert.equal(check.status, 'unverifiable', expression);
    }
    assert.equal(typeof parsePostcondition('globalThis.x = 1'), 'string');
  });

  it('matches with RE2: patterns that backtrack for ever in JavaScript answer at once on 10,000 characters', () => {
    const cases: Array<[pattern: string, text: string, expected: boolean]> = [
      ['(a|a)*$', `${'a'.repeat(9_999)}!`, true],
      ['(a?){25}a{25}', `${'a'.repeat(24)}b`.repeat(400), false],
      ['^(\\w|\\d)*$', `${'1'.repeat(9_999)}!`, false],
      ['(a+)+$', `${'a'.repeat(9_999)}!`, false],
    ];
    for (const [pattern, text, expected] of cases) {
      assert.equal(text.length, 10_000);
      const started = performance.now();
      const check = statusOf(`text matches ${JSON.stringify(pattern)}`, { text });
      console.log(`${pattern} on 10,000 characters: ${(performance.now() - started).toFixed(1)} ms`);
      assert.equal(check.status, expected ? 'passed' : 'failed', pattern);
    }
  });

  it('refuses, naming the pattern, what RE2 cannot run: backreferences and lookarounds', () => {
    for (const pattern of ['(a)\\1', '(?=a)b', '(?<!a)b', '[']) {
      const problem = parsePostcondition(`text matches ${JSON.stringify(pattern)}`);
      assert.equal(typeof problem, 'string', pattern);
      assert.ok((problem as string).includes(`pattern ${JSON.stringify(pattern)} is not supported`), problem as string);
    }
  });

  it('parses paths, operators and literals', () => {
    assert.deepEqual(parsePostcondition('items[0].id != null'), { path: ['items', 0, 'id'], op: '!=', literal: null });
    assert.deepEqual(parsePostcondition('a.b >= -1.5'), { path: ['a', 'b'], op: '>=', literal: -1.5 });
    assert.deepEqual(parsePostcondition('name contains "x y"'), { path: ['name'], op: 'contains', literal: 'x y' });
  });
});
