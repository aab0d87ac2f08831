import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readEvalsFile, readEvalsLeniently } from '../../evals/evals-file.ts';
import { gradeRule, isRule } from '../../evals/expectations.ts';
import { readVerdicts } from '../../evals/grader.ts';

const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('eval grading and evals.json, pure', () => {
  it('tells rules from prose: the postcondition grammar over output or json, and tool_called', () => {
    assert.ok(isRule('output contains "Hello"'));
    assert.ok(isRule('json.total == 12'));
    assert.ok(isRule('tool_called weather.get_forecast'));
    assert.ok(!isRule('The answer is polite'));
    assert.ok(!isRule('rows.length == 2'), 'only output and json are roots');
  });

  it('grades json rules on the answer or its fenced block, and fails an answer that is not JSON with why', () => {
    const outcome = { output: 'Here:\n```json\n{"total": 12}\n```\n', toolsCalled: ['lab.scan'] };
    assert.equal(gradeRule('json.total == 12', outcome).status, 'passed');
    assert.deepEqual(gradeRule('json.total == 12', { output: 'twelve', toolsCalled: [] }), {
      text: 'json.total == 12',
      status: 'failed',
      by: 'rule',
      reason: 'the answer is not JSON',
    });
    assert.equal(gradeRule('tool_called lab.scan', outcome).status, 'passed');
    assert.match(gradeRule('tool_called lab.lookup', outcome).reason ?? '', /was not called \(called: lab\.scan\)/);
  });

  it('makes a grader answer that is not the JSON asked for, or that skips an expectation, a grading error', () => {
    const expectations = ['polite', 'short'];
    assert.deepEqual(
      readVerdicts('Looks good to me!', expectations).map((v) => v.status),
      ['error', 'error'],
    );
    const partial = readVerdicts('```json\n{"expectations": [{"index": 1, "passed": false, "reason": "too long"}]}\n```', expectations);
    assert.deepEqual(
      partial.map((v) => [v.status, v.reason]),
      [
        ['error', 'the grader gave no pass/fail for this expectation'],
        ['failed', 'too long'],
      ],
    );
  });

  it('reads evals.json strictly by field path, and leniently as warnings that keep the usable cases', () => {
    const file = { rubric: 'x', evals: [{ id: 1, prompt: 'Hi', files: ['evals/in.txt'] }, { id: 1, prompt: 'Again' }, { id: 3 }] };
    const strict = readEvalsFile(bytes(file), ['SKILL.md', 'evals/in.txt']);
    assert.deepEqual(
      strict.errors.map((e) => e.field),
      ['evals/evals.json: evals[1].id', 'evals/evals.json: evals[2].prompt'],
    );
    assert.deepEqual(
      strict.warnings.map((w) => w.field),
      ['evals/evals.json: rubric'],
    );
    const lenient = readEvalsLeniently(bytes(file), ['SKILL.md', 'evals/in.txt']);
    assert.deepEqual(
      lenient.suite?.cases.map((c) => c.id),
      ['1'],
    );
    assert.equal(lenient.warnings.length, 3);
    assert.match(readEvalsFile(bytes('{not json'), []).errors[0]!.message, /is not JSON text/);
  });
});
