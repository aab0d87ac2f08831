import type { z } from 'zod';
import { DEFAULT_TIER } from '../contracts/model.ts';
import type { SkillScript, SkillSpec } from '../contracts/skill-spec.ts';
import { readYaml, splitSkillMd, type SkillFieldError } from './frontmatter.ts';
import { findExtensions } from './skill-extensions.ts';
import { FIELD_SCHEMAS, KNOWN_FIELDS, metadataKey, misspeltFields, type Extension } from './skill-schema.ts';

export type { SkillFieldError } from './frontmatter.ts';

/** A skill read from its SKILL.md: its identity, the spec Cadenza runs it by, the frontmatter as read and the procedure. */
export type ParsedSkill = {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  spec: SkillSpec;
  body: string;
  frontmatter: Record<string, unknown>;
};

export type SkillParseResult = { ok: true; skill: ParsedSkill; warnings: SkillFieldError[] } | { ok: false; errors: SkillFieldError[] };

/** Where the SKILL.md came from: its folder's name and the bundle's file paths, when it came in a bundle. */
export type SkillSource = { folder?: string | undefined; files?: string[] | undefined };

/** How strict authoring checks tools: whether a qualified tool name is installed (unchecked when absent). */
export type SkillChecks = SkillSource & { isInstalled?: ((tool: string) => boolean) | undefined };

/**
 * Parses an authored SKILL.md strictly, reporting every problem at once: each field is checked on its own, so one bad
 * field never hides another's problem. Unknown top-level keys and extensions written at the top level (the older
 * form, which the Agent Skills validator refuses) are warnings.
 */
export function parseSkillMd(text: string, checks: SkillChecks = {}): SkillParseResult {
  const split = splitSkillMd(text);
  const errors: SkillFieldError[] = [...split.errors];
  const warnings: SkillFieldError[] = [];
  let fm: Record<string, unknown> | undefined;
  if (split.yaml !== undefined) {
    const read = readYaml(split.yaml);
    if (typeof read === 'string') errors.push({ field: 'frontmatter', message: read });
    else fm = read;
  }
  if (split.body !== undefined && split.body.trim() === '') {
    errors.push({ field: 'body', message: 'must not be empty: write the procedure below the frontmatter' });
  }
  if (!fm) return { ok: false, errors };

  const value = <T>(schema: z.ZodType<T>, raw: unknown, field: string): T | undefined => {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    errors.push(...parsed.error.issues.map((issue) => toFieldError(field, issue)));
    return undefined;
  };
  const name = value(FIELD_SCHEMAS.name, fm.name, 'name');
  const description = value(FIELD_SCHEMAS.description, fm.description, 'description');
  const license = value(FIELD_SCHEMAS.license, fm.license, 'license');
  const compatibility = value(FIELD_SCHEMAS.compatibility, fm.compatibility, 'compatibility');
  const metadata = value(FIELD_SCHEMAS.metadata, fm.metadata, 'metadata');
  const allowedTools = value(FIELD_SCHEMAS['allowed-tools'], fm['allowed-tools'], 'allowed-tools') ?? [];

  const ext = findExtensions(fm);
  errors.push(...ext.unknownKeys, ...ext.undecodable);
  for (const extension of ext.twice) {
    errors.push({ field: extension, message: `is given twice: keep only metadata.${metadataKey(extension)}` });
  }
  const read = <T>(extension: Extension, schema: z.ZodType<T>): T | undefined => {
    const found = ext.found[extension];
    if (!found) return undefined;
    if (found.form === 'top-level') {
      warnings.push({
        field: extension,
        message: `is a Cadenza extension at the top level, which the Agent Skills validator refuses: write it under metadata as ${metadataKey(extension)}`,
      });
    }
    return value(schema, found.raw, found.field);
  };
  const spec: SkillSpec = {
    tier: read('model', FIELD_SCHEMAS.model) ?? DEFAULT_TIER,
    allowedTools,
    triggers: read('triggers', FIELD_SCHEMAS.triggers) ?? [],
    notFor: read('not_for', FIELD_SCHEMAS.not_for) ?? [],
    scripts: read('scripts', FIELD_SCHEMAS.scripts) ?? [],
    approval: read('approval', FIELD_SCHEMAS.approval) ?? [],
  };
  const maxTurns = read('max-turns', FIELD_SCHEMAS['max-turns']);
  if (maxTurns !== undefined) spec.maxTurns = maxTurns;
  if (read('session', FIELD_SCHEMAS.session) === true) spec.session = true;
  const delegates = read('delegates', FIELD_SCHEMAS.delegates);
  if (delegates?.length) spec.delegates = delegates;
  const outputSchema = read('output-schema', FIELD_SCHEMAS['output-schema']);
  if (outputSchema) spec.outputSchema = outputSchema;

  const misspelt = misspeltFields(Object.keys(fm));
  errors.push(...misspelt);
  for (const key of Object.keys(fm)) {
    if (!KNOWN_FIELDS.includes(key) && !misspelt.some((e) => e.field === key))
      warnings.push({ field: key, message: 'unknown field; kept, not used' });
  }
  if (checks.isInstalled) {
    for (const tool of allowedTools) {
      if (!checks.isInstalled(tool)) errors.push({ field: 'allowed-tools', message: `'${tool}' is not an installed tool` });
    }
  }
  const approvalField = ext.found.approval?.field ?? 'approval';
  for (const tool of spec.approval) {
    if (!allowedTools.includes(tool)) errors.push({ field: approvalField, message: `'${tool}' is not in allowed-tools` });
  }
  if (name !== undefined) errors.push(...sourceProblems(name, spec.scripts, checks, ext.found.scripts?.field));
  if (errors.length > 0 || name === undefined || description === undefined) return { ok: false, errors };

  const skill: ParsedSkill = { name, description, spec, body: split.body ?? '', frontmatter: fm };
  if (license !== undefined) skill.license = license;
  if (compatibility !== undefined) skill.compatibility = compatibility;
  if (metadata !== undefined) skill.metadata = metadata;
  return { ok: true, skill, warnings };
}

/** A name that differs from its folder, and scripts whose files the bundle lacks. */
export function sourceProblems(name: string, scripts: SkillScript[], source: SkillSource, scriptsField = 'scripts'): SkillFieldError[] {
  const problems: SkillFieldError[] = [];
  if (source.folder !== undefined && source.folder !== name) {
    problems.push({ field: 'name', message: `must equal its folder's name '${source.folder}'` });
  }
  const files = new Set(source.files ?? []);
  for (const script of scripts) {
    if (files.has(script.path)) continue;
    const where = source.files ? 'is not in the bundle' : 'needs a bundle: upload the skill folder as a zip';
    problems.push({ field: scriptsField, message: `'${script.path}' (${script.name}) ${where}` });
  }
  return problems;
}

function toFieldError(field: string, issue: z.core.$ZodIssue): SkillFieldError {
  const where = issue.path.length > 0 ? `${issue.path.map((key) => `'${String(key)}'`).join('.')} ` : '';
  return { field, message: `${where}${issue.message}` };
}
