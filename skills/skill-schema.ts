import { z } from 'zod';
import { parseQualifiedToolName } from '../tools/tool-names.ts';

/** The model tiers a skill may ask for; config maps each to a model id. */
export const MODEL_TIERS = ['minuet', 'allegro', 'forte'] as const;
export type ModelTier = (typeof MODEL_TIERS)[number];

/** Skill names: 1–64 lowercase letters and digits in groups joined by single hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const KNOWN_FIELDS = ['name', 'description', 'allowed-tools', 'model', 'max-turns', 'license', 'compatibility', 'metadata'];

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
      if (parseQualifiedToolName(entry)) continue;
      // Other Agent Skills tools write `A, B`; Cadenza's contract is space-separated, so say so.
      const hint = entry.includes(',') ? '; separate entries with spaces, not commas' : '';
      ctx.addIssue({
        code: 'custom',
        message: `'${entry}' is not <app-id>.<tool-name> (kebab-case app id, tool name of a-z, 0-9, _)${hint}`,
      });
    }
    return [...new Set(entries)];
  });

/** The zod schema of a SKILL.md frontmatter; unknown fields pass through untouched. */
export const skillFrontmatterSchema = z.looseObject({
  name: z
    .string(must('a string'))
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .regex(SKILL_NAME_PATTERN, 'must be lowercase letters and digits joined by single hyphens (no leading/trailing hyphen)'),
  description: z
    .string(must('a string'))
    .trim()
    .min(1, 'must not be empty')
    .max(1024, 'must be at most 1024 characters'),
  'allowed-tools': allowedTools.optional(),
  model: z.enum(MODEL_TIERS, { error: `must be one of ${MODEL_TIERS.join(', ')}` }).optional(),
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
});

/** Fields that look like a misspelt known field (`max_turns`, `allowedTools`): strict authoring catches them. */
export function misspeltFields(frontmatter: Record<string, unknown>): Array<{ field: string; message: string }> {
  const normalise = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');
  return Object.keys(frontmatter).flatMap((key) => {
    const known = KNOWN_FIELDS.find((field) => normalise(field) === normalise(key));
    return known && known !== key ? [{ field: key, message: `unknown field; did you mean '${known}'?` }] : [];
  });
}
