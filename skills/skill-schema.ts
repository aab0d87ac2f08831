import { z } from 'zod';
import { MAX_TURNS_CEILING } from '../contracts/limits.ts';
import { TIERS } from '../contracts/model.ts';
import { isAllowedToolEntry, SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from '../contracts/names.ts';
import type { SkillScript } from '../contracts/skill-spec.ts';
import { bundlePathProblem } from './bundle-path.ts';
import { outputSchemaProblem } from '../lib/output-schema.ts';

/** The Agent Skills specification's top-level fields: the only ones its reference validator accepts. */
export const SPEC_FIELDS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'];

/** Cadenza's extensions; each is written under `metadata` as `cadenza-<extension>` (`metadataKey`). */
export const EXTENSIONS = [
  'model',
  'max-turns',
  'triggers',
  'not_for',
  'scripts',
  'approval',
  'session',
  'delegates',
  'output-schema',
] as const;
export type Extension = (typeof EXTENSIONS)[number];

/** The metadata key of an extension: `cadenza-model`, `cadenza-max-turns`, `cadenza-not_for`... */
export const metadataKey = (extension: Extension) => `cadenza-${extension}`;

/** Every field a SKILL.md may carry at the top level (extensions there are the older form, still read). */
export const KNOWN_FIELDS: string[] = [...SPEC_FIELDS, ...EXTENSIONS];

const must = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

const allowedTools = z
  .union([z.string(), z.array(z.string())], {
    error: 'must be a space-separated string or a list of <app-id>.<tool-name> entries',
  })
  .transform((value, ctx) => {
    const entries = typeof value === 'string' ? value.split(/\s+/).filter((e) => e !== '') : value;
    for (const entry of entries) {
      if (isAllowedToolEntry(entry)) continue;
      // Other Agent Skills tools write `A, B`; Cadenza's contract is space-separated, so say so.
      const hint = entry.includes(',') ? '; separate entries with spaces, not commas' : '';
      ctx.addIssue({
        code: 'custom',
        message: `'${entry}' is not <app-id>.<tool-name> or <app-id>.* (kebab-case app id, tool name of a-z, 0-9, _)${hint}`,
      });
    }
    return [...new Set(entries)];
  });

/** Example asks in the author's words (`triggers` load the skill, `not_for` argue against it). */
const asks = z
  .array(z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'), {
    error: 'must be a list of example asks',
  })
  .max(50, 'must list at most 50 asks');

/** A declared script: a name (tool-name charset), its path inside the bundle, its runtime and its postconditions. */
const scriptEntry = z.strictObject(
  {
    name: z.string(must('a string')).regex(TOOL_NAME_PATTERN, 'must be 1–48 of a-z, 0-9, _'),
    path: z.string(must('a string')).refine((p) => bundlePathProblem(p) === undefined, {
      error: (issue) => `must be a relative path inside the bundle (${bundlePathProblem(String(issue.input))})`,
    }),
    description: z.string(must('a string')).trim().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters').optional(),
    runtime: z.enum(['python', 'node'], { error: 'must be python or node' }).optional(),
    postconditions: z
      .array(z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(300, 'must be at most 300 characters'), {
        error: 'must be a list of expressions such as rows.length > 0',
      })
      .max(20, 'must list at most 20 postconditions')
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `has unknown key ${issue.keys.map((k) => `'${k}'`).join(', ')}`
        : 'must be a mapping {name, path, description?, runtime?, postconditions?}',
  },
) satisfies z.ZodType<SkillScript>;
const scripts = z
  .array(scriptEntry, { error: 'must be a list of {name, path, description?, runtime?, postconditions?} entries' })
  .max(50, 'must list at most 50 scripts')
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (seen.has(entry.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `'${entry.name}' is declared twice` });
      seen.add(entry.name);
    });
  });

/** The zod schema of each known field, so that a lenient reader can check them one by one. */
export const FIELD_SCHEMAS = {
  name: z
    .string(must('a string'))
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .regex(SKILL_NAME_PATTERN, 'must be lowercase letters and digits joined by single hyphens (no leading/trailing hyphen)')
    // Missions name `skill: "auto"` to have discovery choose, so no skill may be called that.
    .refine((name) => name !== 'auto', '\'auto\' is reserved: missions use skill "auto" to let discovery choose'),
  description: z.string(must('a string')).trim().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters'),
  'allowed-tools': allowedTools.optional(),
  model: z.enum(TIERS, { error: `must be one of ${TIERS.join(', ')}` }).optional(),
  'max-turns': z
    .int({ error: `must be an integer from 1 to ${MAX_TURNS_CEILING}` })
    .min(1, `must be an integer from 1 to ${MAX_TURNS_CEILING}`)
    .max(MAX_TURNS_CEILING, `must be an integer from 1 to ${MAX_TURNS_CEILING}`)
    .optional(),
  license: z.string(must('a string')).trim().min(1, 'must not be empty').optional(),
  compatibility: z.string(must('a string')).max(500, 'must be at most 500 characters').optional(),
  metadata: z
    .record(z.string(), z.string({ error: 'must be a string (quote numbers and booleans)' }), {
      error: 'must be a mapping of strings to strings',
    })
    .optional(),
  triggers: asks.optional(),
  not_for: asks.optional(),
  scripts: scripts.optional(),
  /** The tools (of `allowed-tools`) whose calls a person approves first, in addition to those app.yml requires it for. */
  approval: allowedTools.optional(),
  /** A session: a mission of this skill goes idle after it answers and takes the next message (`"true"` or `"false"`). */
  session: z.boolean({ error: 'must be "true" or "false"' }).optional(),
  /** The skills a mission of this one may hand work to with the `delegate` tool: space-separated skill names. */
  delegates: z
    .union([z.string(), z.array(z.string())], { error: 'must be space-separated skill names or a list of them' })
    .transform((value, ctx) => {
      const names = typeof value === 'string' ? value.split(/[\s,]+/).filter((n) => n !== '') : value;
      for (const name of names)
        if (!SKILL_NAME_PATTERN.test(name)) ctx.addIssue({ code: 'custom', message: `'${name}' is not a skill name` });
      return [...new Set(names)];
    })
    .optional(),
  /** The JSON Schema (of an object) its missions' answers must match: JSON text under metadata, checked with Ajv. */
  'output-schema': z
    .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object, written as JSON' })
    .superRefine((schema, ctx) => {
      const problem = outputSchemaProblem(schema);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
} as const;

/** Keys that look like a misspelt known key (`max_turns`, `allowedTools`): strict authoring catches them. */
export function misspeltFields(
  keys: Iterable<string>,
  known: readonly string[] = KNOWN_FIELDS,
  prefix = '',
): Array<{ field: string; message: string }> {
  const normalise = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');
  return [...keys].flatMap((key) => {
    const match = known.find((field) => normalise(field) === normalise(key));
    return match && match !== key ? [{ field: `${prefix}${key}`, message: `unknown field; did you mean '${match}'?` }] : [];
  });
}
