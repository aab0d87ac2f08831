import type { ExpectationResult } from '../contracts/evals.ts';
import { checkPostconditions, parsePostcondition } from '../skill-scripts/postconditions.ts';

/** What a rule is checked against: the mission's final answer (and its JSON, when it is JSON) and the tools it called. */
export type EvalOutcome = { output: string; toolsCalled: string[] };

const TOOL_CALLED = /^tool_called\s+([a-z0-9][a-z0-9-]*\.[a-z0-9_]+)\s*$/;
const ROOTS = ['output', 'json'];

/**
 * Whether an expectation is a rule graded without a model: `tool_called <app-id>.<tool-name>`, or the scripts'
 * postcondition grammar over `output` (the answer's text) or `json` (the answer read as JSON). Anything else is prose,
 * for the grader model.
 */
export function isRule(expectation: string): boolean {
  if (TOOL_CALLED.test(expectation.trim())) return true;
  const parsed = parsePostcondition(expectation);
  return typeof parsed !== 'string' && typeof parsed.path[0] === 'string' && ROOTS.includes(parsed.path[0]);
}

/** Grades a rule; a rule that cannot be verified (no JSON in the answer, a missing key) fails, with why. */
export function gradeRule(expectation: string, outcome: EvalOutcome): ExpectationResult {
  const called = TOOL_CALLED.exec(expectation.trim());
  if (called) {
    const tool = called[1]!;
    return outcome.toolsCalled.includes(tool)
      ? { text: expectation, status: 'passed', by: 'rule' }
      : {
          text: expectation,
          status: 'failed',
          by: 'rule',
          reason: `${tool} was not called (called: ${outcome.toolsCalled.join(', ') || 'none'})`,
        };
  }
  const json = answerJson(outcome.output);
  const [check] = checkPostconditions([expectation], { output: outcome.output, ...(json.ok ? { json: json.value } : {}) }, true);
  if (check!.status === 'passed') return { text: expectation, status: 'passed', by: 'rule' };
  const reason =
    check!.status === 'unverifiable' && !json.ok && expectation.trim().startsWith('json') ? 'the answer is not JSON' : check!.reason;
  return { text: expectation, status: 'failed', by: 'rule', ...(reason ? { reason } : {}) };
}

/** The answer as JSON: the whole text, or the first fenced ```json block in it. */
function answerJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text);
  for (const candidate of [text, fenced?.[1]]) {
    if (candidate === undefined) continue;
    try {
      return { ok: true, value: JSON.parse(candidate) };
    } catch {
      // Not JSON: try the next form.
    }
  }
  return { ok: false };
}
