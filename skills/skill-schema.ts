import { z } from 'zod';
import { TIERS } from '../contracts/model.ts';
import { isAllowedToolEntry, SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from '../contracts/names.ts';
import { bundlePathProblem } from './bundle-path.ts';

/** The specification's fields plus Cadenza's extensions (`triggers`, `not_for`, `scripts`, `model`, `max-turns`). */
export const KNOWN_FIELDS = [
  'name',
  'description',
  'allowed-tools',
  'model',
  'max-turns',
  'license',
  'compatibility',
  'metadata',
  'triggers',
  'not_for',
  'scripts',
];

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

/** A declared script: a name (tool-name charset) and its path inside the bundle; running scripts comes later. */
const scriptEntry = z.strictObject(
  {
    name: z.string(must('a string')).regex(TOOL_NAME_PATTERN, 'must be 1–48 of a-z, 0-9, _'),
    path: z.string(must('a string')).refine((p) => bundlePathProblem(p) === undefined, {
      error: (issue) => `must be a relative path inside the bundle (${bundlePathProblem(String(issue.input))})`,
    }),
    description: z.string(must('a string')).trim().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters').optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `has unknown key ${issue.keys.map((k) => `'${k}'`).join(', ')}`
        : 'must be a mapping {name, path, description?}',
  },
);
const scripts = z
  .array(scriptEntry, { error: 'must be a list of {name, path, description?} entries' })
  .max(50, 'must list at most 50 scripts')
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (seen.has(entry.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `'${entry.name}' is declared twice` });
      seen.add(entry.name);
    });
  });

/** One declared script entry of a skill. */
export type SkillScript = z.infer<typeof scriptEntry>;

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
    .int({ error: 'must be an integer from 1 to 50' })
    .min(1, 'must be an integer from 1 to 50')
    .max(50, 'must be an integer from 1 to 50')
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
} as const;

/** The zod schema of a SKILL.md frontmatter; unknown fields pass through untouched. */
export const skillFrontmatterSchema = z.looseObject(FIELD_SCHEMAS);

/** Fields that look like a misspelt known field (`max_turns`, `allowedTools`): strict authoring catches them. */
export function misspeltFields(frontmatter: Record<string, unknown>): Array<{ field: string; message: string }> {
  const normalise = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');
  return Object.keys(frontmatter).flatMap((key) => {
    const known = KNOWN_FIELDS.find((field) => normalise(field) === normalise(key));
    return known && known !== key ? [{ field: key, message: `unknown field; did you mean '${known}'?` }] : [];
  });
}
