import { isDeepStrictEqual } from 'node:util';
import { compileUserPattern, userPatternProblem } from '../lib/user-pattern.ts';

/** The comparison operators of the postcondition grammar `<key-path> <op> <literal>`. */
export const POSTCONDITION_OPS = ['==', '!=', '<=', '>=', '<', '>', 'contains', 'matches'] as const;
type Op = (typeof POSTCONDITION_OPS)[number];

/** A parsed postcondition: the path as keys and indexes, the operator, the JSON literal. */
export type Postcondition = { path: Array<string | number>; op: Op; literal: unknown };

/** How one postcondition came out; `unverifiable` is never counted as passed. */
export type PostconditionCheck = { expression: string; status: 'passed' | 'failed' | 'unverifiable'; reason?: string };

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*/;
// `matches` runs RE2 (lib/user-pattern.ts), linear in the text; the text is bounded all the same.
const MAX_MATCH_INPUT = 10_000;

/**
 * Parses `<key-path> <op> <literal>`: a path of `.key`, `[index]` and `["key"]` steps from a first key (`$` is the
 * output itself), an operator, and a JSON literal (number, "string", true, false, null). Returns why when it cannot.
 */
export function parsePostcondition(expression: string): Postcondition | string {
  let rest = expression.trim();
  const path: Array<string | number> = [];
  const first = IDENT.exec(rest);
  if (!first && !rest.startsWith('[')) return 'must start with a key path such as rows.length or items[0].id';
  if (first && first[0] !== '$') path.push(first[0]);
  rest = rest.slice(first?.[0].length ?? 0);
  for (;;) {
    const key = /^\.([A-Za-z_$][A-Za-z0-9_$]*)/.exec(rest);
    const index = /^\[(\d{1,9})\]/.exec(rest);
    const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest);
    if (key) path.push(key[1]!);
    else if (index) path.push(Number(index[1]));
    else if (quoted) path.push(JSON.parse(quoted[1]!) as string);
    else break;
    rest = rest.slice((key ?? index ?? quoted)![0].length);
  }
  rest = rest.trimStart();
  const op = POSTCONDITION_OPS.find((o) => rest.startsWith(o) && (/^\w/.test(o) ? /^\s/.test(rest.slice(o.length)) : true));
  if (!op) return `expects an operator (${POSTCONDITION_OPS.join(' ')}) after the key path`;
  const text = rest.slice(op.length).trim();
  let literal: unknown;
  try {
    literal = JSON.parse(text);
  } catch {
    return `expects a JSON literal (number, "string", true, false, null) after ${op}, not ${JSON.stringify(text)}`;
  }
  if (literal !== null && typeof literal === 'object') return 'compares with a number, a "string", true, false or null only';
  if (op === 'matches' && typeof literal !== 'string') return 'matches takes a "regular expression" as a string';
  if (op === 'matches') {
    const problem = userPatternProblem(literal as string);
    if (problem) return problem;
  }
  return { path, op, literal };
}

/** Checks each expression against a script's JSON output, without eval; text output verifies nothing. */
export function checkPostconditions(expressions: readonly string[], output: unknown, outputIsJson: boolean): PostconditionCheck[] {
  return expressions.map((expression) => {
    const unverifiable = (reason: string): PostconditionCheck => ({ expression, status: 'unverifiable', reason });
    const parsed = parsePostcondition(expression);
    if (typeof parsed === 'string') return unverifiable(`the grammar cannot express it: ${parsed}`);
    if (!outputIsJson) return unverifiable('the output is not JSON');
    const found = resolvePath(output, parsed.path);
    if (!found.ok) return unverifiable(`${found.missing} does not exist in the output`);
    const verdict = compare(found.value, parsed.op, parsed.literal);
    if (typeof verdict === 'string') return unverifiable(verdict);
    return verdict
      ? { expression, status: 'passed' }
      : { expression, status: 'failed', reason: `${describePath(parsed.path)} is ${JSON.stringify(found.value)?.slice(0, 200)}` };
  });
}

function resolvePath(root: unknown, path: Array<string | number>): { ok: true; value: unknown } | { ok: false; missing: string } {
  let value = root;
  for (let i = 0; i < path.length; i++) {
    const step = path[i]!;
    const here = describePath(path.slice(0, i + 1));
    if (step === 'length' && (Array.isArray(value) || typeof value === 'string')) value = value.length;
    else if (typeof step === 'number' && Array.isArray(value) && step < value.length) value = value[step];
    else if (typeof step === 'string' && value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step))
      value = (value as Record<string, unknown>)[step];
    else return { ok: false, missing: here };
  }
  return { ok: true, value };
}

function compare(actual: unknown, op: Op, literal: unknown): boolean | string {
  switch (op) {
    case '==':
      return isDeepStrictEqual(actual, literal);
    case '!=':
      return !isDeepStrictEqual(actual, literal);
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const comparable =
        (typeof actual === 'number' && typeof literal === 'number') || (typeof actual === 'string' && typeof literal === 'string');
      if (!comparable) return `${op} compares two numbers or two strings, not ${typeName(actual)} and ${typeName(literal)}`;
      const [a, b] = [actual as number | string, literal as number | string];
      return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
    }
    case 'contains':
      if (typeof actual === 'string' && typeof literal === 'string') return actual.includes(literal);
      if (Array.isArray(actual)) return actual.some((item) => isDeepStrictEqual(item, literal));
      return `contains looks in a string or a list, not in ${typeName(actual)}`;
    case 'matches': {
      if (typeof actual !== 'string') return `matches tests a string, not ${typeName(actual)}`;
      if (actual.length > MAX_MATCH_INPUT) return `matches tests strings of at most ${MAX_MATCH_INPUT} characters`;
      // parsePostcondition already refused a pattern RE2 cannot compile.
      return compileUserPattern(literal as string).test(actual);
    }
  }
}

const typeName = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
const describePath = (path: Array<string | number>) =>
  path.length === 0 ? '$' : path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
