import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { misspeltFields, skillFrontmatterSchema, type ModelTier } from './skill-schema.ts';

/** A SKILL.md problem; `field` is the frontmatter key as written, or `frontmatter` / `body`. */
export type SkillFieldError = { field: string; message: string };

/** An authored skill: validated frontmatter fields, the raw frontmatter and the Markdown procedure. */
export type ParsedSkill = {
  name: string;
  description: string;
  /** Qualified tool names `<app-id>.<tool-name>`, deduplicated, in the order written. */
  allowedTools: string[];
  model?: ModelTier;
  maxTurns?: number;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  body: string;
  frontmatter: Record<string, unknown>;
};

export type SkillParseResult = { ok: true; skill: ParsedSkill } | { ok: false; errors: SkillFieldError[] };

/** Parses an authored SKILL.md strictly, reporting every problem at once. */
export function parseSkillMd(text: string): SkillParseResult {
  const lines = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').split('\n');
  const errors: SkillFieldError[] = [];
  let frontmatter: Record<string, unknown> | undefined;
  // Undefined when an unclosed frontmatter leaves no telling where the body starts.
  let bodyLines: string[] | undefined = lines;

  if (lines[0]?.trimEnd() !== '---') {
    errors.push({ field: 'frontmatter', message: "missing: SKILL.md must begin with YAML frontmatter between '---' lines" });
  } else {
    const end = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
    if (end < 0) {
      errors.push({ field: 'frontmatter', message: "not closed: add a '---' line after the frontmatter" });
      bodyLines = undefined;
    } else {
      const read = readYaml(lines.slice(1, end).join('\n'));
      if (typeof read === 'string') errors.push({ field: 'frontmatter', message: read });
      else frontmatter = read;
      bodyLines = lines.slice(end + 1);
    }
  }

  const parsed = frontmatter && skillFrontmatterSchema.safeParse(frontmatter);
  if (parsed && !parsed.success) errors.push(...parsed.error.issues.map(toFieldError));
  if (frontmatter) errors.push(...misspeltFields(frontmatter));
  const body = (bodyLines ?? []).join('\n').replace(/^\s*\n/, '').trimEnd();
  if (bodyLines && body.trim() === '') {
    errors.push({ field: 'body', message: 'must not be empty: write the procedure below the frontmatter' });
  }
  if (!frontmatter || !parsed?.success || errors.length > 0) return { ok: false, errors };

  const data = parsed.data;
  const skill: ParsedSkill = {
    name: data.name,
    description: data.description,
    allowedTools: data['allowed-tools'] ?? [],
    body,
    frontmatter,
  };
  if (data.model !== undefined) skill.model = data.model;
  if (data['max-turns'] !== undefined) skill.maxTurns = data['max-turns'];
  if (data.license !== undefined) skill.license = data.license;
  if (data.compatibility !== undefined) skill.compatibility = data.compatibility;
  if (data.metadata !== undefined) skill.metadata = data.metadata;
  return { ok: true, skill };
}

/** The frontmatter as a mapping, or why it is not one; YAML line numbers count from the top of the file. */
function readYaml(yaml: string): Record<string, unknown> | string {
  const doc = parseDocument(yaml);
  const error = doc.errors[0];
  if (error) {
    const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    // +1 for the opening '---' line.
    const line = (error.linePos?.[0].line ?? 0) + 1;
    return `invalid YAML at line ${line}: ${reason}`;
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be a YAML mapping of fields';
  return value as Record<string, unknown>;
}

function toFieldError(issue: z.core.$ZodIssue): SkillFieldError {
  const [field, ...rest] = issue.path;
  const where = rest.length > 0 ? `${rest.map((key) => `'${String(key)}'`).join('.')} ` : '';
  return { field: field === undefined ? 'frontmatter' : String(field), message: `${where}${issue.message}` };
}
