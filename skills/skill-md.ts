import type { z } from 'zod';
import { readYaml, splitSkillMd, type SkillFieldError } from './frontmatter.ts';
import type { Tier } from '../contracts/model.ts';
import { misspeltFields, skillFrontmatterSchema, type SkillScript } from './skill-schema.ts';

export type { SkillFieldError } from './frontmatter.ts';

/** A skill read from its SKILL.md: validated frontmatter fields, the frontmatter and the Markdown procedure. */
export type ParsedSkill = {
  name: string;
  description: string;
  /** Qualified tool names `<app-id>.<tool-name>`, deduplicated, in the order written. */
  allowedTools: string[];
  model?: Tier;
  maxTurns?: number;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** Example asks that should load the skill (Cadenza extension). */
  triggers?: string[];
  /** Example asks that look alike but should not load it (Cadenza extension). */
  notFor?: string[];
  /** Declared scripts; parsed and checked now, run in a later issue. */
  scripts?: SkillScript[];
  body: string;
  frontmatter: Record<string, unknown>;
};

export type SkillParseResult = { ok: true; skill: ParsedSkill } | { ok: false; errors: SkillFieldError[] };

/** Where the SKILL.md came from: its folder's name and the bundle's file paths, when it came in a bundle. */
export type SkillSource = { folder?: string | undefined; files?: string[] | undefined };

/** Parses an authored SKILL.md strictly, reporting every problem at once. */
export function parseSkillMd(text: string, source: SkillSource = {}): SkillParseResult {
  const split = splitSkillMd(text);
  const errors: SkillFieldError[] = [...split.errors];
  let frontmatter: Record<string, unknown> | undefined;
  if (split.yaml !== undefined) {
    const read = readYaml(split.yaml);
    if (typeof read === 'string') errors.push({ field: 'frontmatter', message: read });
    else frontmatter = read;
  }

  const parsed = frontmatter && skillFrontmatterSchema.safeParse(frontmatter);
  if (parsed && !parsed.success) errors.push(...parsed.error.issues.map(toFieldError));
  if (frontmatter) errors.push(...misspeltFields(frontmatter));
  if (split.body !== undefined && split.body.trim() === '') {
    errors.push({ field: 'body', message: 'must not be empty: write the procedure below the frontmatter' });
  }
  if (parsed?.success) errors.push(...sourceProblems(parsed.data.name, parsed.data.scripts ?? [], source));
  if (!frontmatter || !parsed?.success || errors.length > 0) return { ok: false, errors };
  return { ok: true, skill: toParsedSkill(parsed.data, split.body ?? '', frontmatter) };
}

/** The ParsedSkill of frontmatter values that passed the schema. */
export function toParsedSkill(
  data: z.output<typeof skillFrontmatterSchema>,
  body: string,
  frontmatter: Record<string, unknown>,
): ParsedSkill {
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
  if (data.triggers !== undefined) skill.triggers = data.triggers;
  if (data.not_for !== undefined) skill.notFor = data.not_for;
  if (data.scripts !== undefined) skill.scripts = data.scripts;
  return skill;
}

/** A name that differs from its folder, and scripts whose files the bundle lacks. */
export function sourceProblems(name: string, scripts: SkillScript[], source: SkillSource): SkillFieldError[] {
  const problems: SkillFieldError[] = [];
  if (source.folder !== undefined && source.folder !== name) {
    problems.push({ field: 'name', message: `must equal its folder's name '${source.folder}'` });
  }
  const files = new Set(source.files ?? []);
  for (const script of scripts) {
    if (files.has(script.path)) continue;
    const where = source.files ? 'is not in the bundle' : 'needs a bundle: upload the skill folder as a zip';
    problems.push({ field: 'scripts', message: `'${script.path}' (${script.name}) ${where}` });
  }
  return problems;
}

function toFieldError(issue: z.core.$ZodIssue): SkillFieldError {
  const [field, ...rest] = issue.path;
  const where = rest.length > 0 ? `${rest.map((key) => `'${String(key)}'`).join('.')} ` : '';
  return { field: field === undefined ? 'frontmatter' : String(field), message: `${where}${issue.message}` };
}
