import { z } from 'zod';
import { parseQualifiedToolName } from '../contracts/names.ts';
import type { EvalCase, EvalSuite } from '../contracts/evals.ts';

/** Where a skill folder keeps its eval cases (the Agent Skills evaluation convention). */
export const EVALS_PATH = 'evals/evals.json';

/** A problem with one field of evals.json, by its path in the file (`evals/evals.json: evals[1].prompt`). */
export type EvalsFieldError = { field: string; message: string };

/** What reading the file gave: the usable cases, the warnings, and (strictly read) the errors that refuse it. */
export type EvalsReading = { suite: EvalSuite | undefined; warnings: EvalsFieldError[]; errors: EvalsFieldError[] };

const KNOWN_TOP = ['skill_name', 'evals'];
const KNOWN_CASE = ['id', 'prompt', 'expected_output', 'files', 'expectations', 'stubs', 'workspace'];

const caseSchema = z.looseObject({
  id: z.union([z.number().int().nonnegative(), z.string().trim().min(1).max(64)]),
  prompt: z.string().trim().min(1).max(20_000),
  expected_output: z.string().max(20_000).optional(),
  files: z.array(z.string().min(1).max(255)).max(20).default([]),
  expectations: z.array(z.string().trim().min(1).max(2_000)).max(50).default([]),
  stubs: z
    .record(
      z.string().refine((t) => parseQualifiedToolName(t) !== undefined, 'must be a tool as <app-id>.<tool-name>'),
      z.unknown(),
    )
    .default({}),
  workspace: z.string().trim().min(1).max(200).optional(),
});
const fileSchema = z.looseObject({ skill_name: z.string().optional(), evals: z.array(z.unknown()).min(1).max(100) });

const at = (path: ReadonlyArray<PropertyKey>) =>
  `${EVALS_PATH}: ${path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || '(file)'}`;

/**
 * Reads `evals/evals.json` of a skill folder. Every problem is named by its path in the file; strict authoring refuses
 * the folder on any error, a lenient import keeps the file (verbatim, in the bundle) and the cases that are usable,
 * with the rest as warnings. Unknown fields are warnings either way: kept in the file, not used.
 */
export function readEvalsFile(bytes: Uint8Array, bundlePaths: readonly string[]): EvalsReading {
  const warnings: EvalsFieldError[] = [];
  const errors: EvalsFieldError[] = [];
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    return { suite: undefined, warnings, errors: [{ field: EVALS_PATH, message: `is not JSON text: ${(err as Error).message}` }] };
  }
  const top = fileSchema.safeParse(raw);
  if (!top.success) {
    const issues = top.error.issues.map((i) => ({ field: at(i.path), message: i.message }));
    return { suite: undefined, warnings, errors: issues };
  }
  for (const key of Object.keys(top.data).filter((k) => !KNOWN_TOP.includes(k)))
    warnings.push({ field: at([key]), message: 'unknown field; kept, not used' });
  const present = new Set(bundlePaths);
  const cases: EvalCase[] = [];
  top.data.evals.forEach((entry, index) => {
    const parsed = caseSchema.safeParse(entry);
    if (!parsed.success) {
      errors.push(...parsed.error.issues.map((i) => ({ field: at(['evals', index, ...i.path]), message: i.message })));
      return;
    }
    const c = parsed.data;
    for (const key of Object.keys(c).filter((k) => !KNOWN_CASE.includes(k)))
      warnings.push({ field: at(['evals', index, key]), message: 'unknown field; kept, not used' });
    const id = String(c.id);
    const problems: EvalsFieldError[] = [];
    if (cases.some((known) => known.id === id)) problems.push({ field: at(['evals', index, 'id']), message: `repeats the id ${id}` });
    c.files.forEach((path, f) => {
      if (!present.has(path)) problems.push({ field: at(['evals', index, 'files', f]), message: `'${path}' is not in the skill folder` });
    });
    if (problems.length > 0) return void errors.push(...problems);
    cases.push({
      id,
      prompt: c.prompt,
      ...(c.expected_output !== undefined ? { expectedOutput: c.expected_output } : {}),
      files: c.files,
      expectations: c.expectations,
      stubs: c.stubs,
      ...(c.workspace !== undefined ? { workspace: c.workspace } : {}),
    });
  });
  return { suite: cases.length > 0 ? { cases } : undefined, warnings, errors };
}

/** A lenient reading: errors become warnings saying the case (or the file) will not run. */
export function readEvalsLeniently(bytes: Uint8Array, bundlePaths: readonly string[]): Omit<EvalsReading, 'errors'> {
  const read = readEvalsFile(bytes, bundlePaths);
  const dropped = read.errors.map((e) => ({ field: e.field, message: `${e.message}; that eval case will not run` }));
  return { suite: read.suite, warnings: [...read.warnings, ...dropped] };
}

/** The eval cases of an uploaded folder (none without the file), read strictly or leniently. */
export function evalsOfFolder(
  files: ReadonlyArray<{ path: string; data: Uint8Array }> | undefined,
  mode: 'strict' | 'lenient',
): EvalsReading {
  const file = files?.find((f) => f.path === EVALS_PATH);
  if (!file) return { suite: undefined, warnings: [], errors: [] };
  const paths = files!.map((f) => f.path);
  return mode === 'strict' ? readEvalsFile(file.data, paths) : { ...readEvalsLeniently(file.data, paths), errors: [] };
}

/**
 * The one eval case a skill drafted from a run proposes (`evals/evals.json` text): the run's objective as the prompt,
 * its answer as the expected output, a `tool_called` rule per app tool it used, and a prose expectation that the answer
 * gives what the run's did.
 */
export function proposedEvalsJson(skillName: string, run: { objective: string; answer: string; tools: string[] }): string {
  const answer = run.answer.length > 2_000 ? `${run.answer.slice(0, 2_000)}…` : run.answer;
  const evals = [
    {
      id: 1,
      prompt: run.objective,
      ...(answer.trim() ? { expected_output: answer } : {}),
      files: [],
      expectations: [...run.tools.map((t) => `tool_called ${t}`), 'The answer gives what the expected output gives'],
    },
  ];
  return `${JSON.stringify({ skill_name: skillName, evals }, null, 2)}\n`;
}
