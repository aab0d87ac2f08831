import type { EvalCase, ExpectationResult } from '../contracts/evals.ts';
import type { ChatMessage } from '../model/model-types.ts';
import type { EvalOutcome } from './expectations.ts';

/** The grader's instructions: a context of its own, apart from the mission's. */
export const GRADER_INSTRUCTION = [
  'You grade the answer of an AI assistant to a task against a list of expectations.',
  'For each expectation decide whether the answer meets it, strictly, from the evidence given only.',
  'Reply with JSON only, no prose around it: {"expectations": [{"index": <number>, "passed": <true|false>, "reason": "<one sentence>"}]},',
  'one entry per expectation, by its index.',
].join(' ');

const ANSWER_CHARS = 20_000;

/** The grader's one message: the task, the expected output when given, the answer, the tools called, the numbered expectations. */
export function graderMessage(evalCase: EvalCase, outcome: EvalOutcome, expectations: string[]): ChatMessage {
  const answer = outcome.output.length > ANSWER_CHARS ? `${outcome.output.slice(0, ANSWER_CHARS)}… (cut)` : outcome.output;
  const parts = [
    `## Task\n${evalCase.prompt}`,
    ...(evalCase.expectedOutput ? [`## Expected output\n${evalCase.expectedOutput}`] : []),
    `## Answer\n${answer}`,
    `## Tools called\n${outcome.toolsCalled.join(', ') || '(none)'}`,
    `## Expectations\n${expectations.map((e, i) => `${i}. ${e}`).join('\n')}`,
  ];
  return { role: 'user', content: [{ type: 'text', text: parts.join('\n\n') }] };
}

/**
 * The grader's verdicts, one per expectation: an answer that is not the JSON asked for, or that leaves an expectation
 * out, makes that expectation a grading error (never a pass, never a crash).
 */
export function readVerdicts(reply: string, expectations: string[]): ExpectationResult[] {
  const entries = verdictEntries(reply);
  return expectations.map((text, index) => {
    const entry = entries?.find((e) => e !== null && typeof e === 'object' && (e as { index?: unknown }).index === index) as
      { passed?: unknown; reason?: unknown } | undefined;
    if (!entries)
      return { text, status: 'error', by: 'grader', reason: `the grader's answer is not the JSON asked for: ${snippet(reply)}` };
    if (!entry || typeof entry.passed !== 'boolean')
      return { text, status: 'error', by: 'grader', reason: 'the grader gave no pass/fail for this expectation' };
    const reason = typeof entry.reason === 'string' ? entry.reason.slice(0, 1_000) : undefined;
    return { text, status: entry.passed ? 'passed' : 'failed', by: 'grader', ...(reason ? { reason } : {}) };
  });
}

function verdictEntries(reply: string): unknown[] | undefined {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end < start) return undefined;
  try {
    const parsed = JSON.parse(reply.slice(start, end + 1)) as { expectations?: unknown };
    return Array.isArray(parsed.expectations) ? parsed.expectations : undefined;
  } catch {
    return undefined;
  }
}

const snippet = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
