import { readYaml, splitSkillMd, type SkillFieldError } from './frontmatter.ts';
import { lenientAllowedTools, lenientAsks, lenientCompatibility, lenientField, lenientMetadata, lenientScripts } from './lenient-fields.ts';
import { DEFAULT_TIER } from '../contracts/model.ts';
import { SKILL_NAME_PATTERN } from '../contracts/names.ts';
import { findExtensions } from './skill-extensions.ts';
import { FIELD_SCHEMAS, KNOWN_FIELDS, metadataKey, misspeltFields, type Extension } from './skill-schema.ts';
import type { ParsedSkill, SkillSource } from './skill-md.ts';
import { quoteColonScalars } from './yaml-recovery.ts';

/** An imported skill with the warnings its reading raised (kept as the import's audit record), or why it was refused. */
export type ImportResult = { ok: true; skill: ParsedSkill; warnings: SkillFieldError[] } | { ok: false; errors: SkillFieldError[] };

/**
 * Reads a SKILL.md written elsewhere leniently, as the Agent Skills client guide advises: problems become warnings
 * and the field is dropped or repaired; only a frontmatter that stays unparseable, or no description, is refused.
 * The spec holds the values Cadenza uses; the frontmatter is kept as read (and the file verbatim, by the caller).
 */
export function importSkillMd(text: string, source: SkillSource = {}): ImportResult {
  const split = splitSkillMd(text);
  if (split.yaml === undefined) return { ok: false, errors: split.errors };
  const warnings: SkillFieldError[] = [];
  let fm = readYaml(split.yaml);
  if (typeof fm === 'string') {
    const recovered = quoteColonScalars(split.yaml);
    const retry = recovered.keys.length > 0 ? readYaml(recovered.yaml) : fm;
    if (typeof retry === 'string') return { ok: false, errors: [{ field: 'frontmatter', message: fm }] };
    warnings.push(...recovered.keys.map((field) => ({ field, message: "unquoted ': ' inside a plain value; quoted and read again" })));
    fm = retry;
  }

  const description = fm.description;
  if (typeof description !== 'string' || description.trim() === '') {
    return { ok: false, errors: [{ field: 'description', message: description === undefined ? 'is required' : 'must be non-empty text' }] };
  }
  if (description.trim().length > 1024)
    warnings.push({
      field: 'description',
      message: `is ${description.trim().length} characters, over the specification's 1024; kept whole`,
    });
  const name = resolveName(fm.name, source.folder, warnings);
  if (!name)
    return { ok: false, errors: [{ field: 'name', message: 'is missing or unusable, and there is no folder name to fall back on' }] };

  const misspelt = new Map(misspeltFields(Object.keys(fm)).map((e) => [e.field, e.message]));
  for (const key of Object.keys(fm)) {
    if (!KNOWN_FIELDS.includes(key)) warnings.push({ field: key, message: misspelt.get(key) ?? 'unknown field; kept, not used' });
  }

  const skill: ParsedSkill = {
    name,
    description: description.trim(),
    spec: { tier: DEFAULT_TIER, allowedTools: [], triggers: [], notFor: [], scripts: [], approval: [] },
    body: split.body ?? '',
    frontmatter: { ...fm, name },
  };
  const { spec } = skill;
  const use = <T>(read: { value: T | undefined; warnings: SkillFieldError[] }, set: (value: T) => void) => {
    warnings.push(...read.warnings);
    if (read.value !== undefined) set(read.value);
  };
  if (fm['allowed-tools'] !== undefined) use(lenientAllowedTools(fm['allowed-tools']), (tools) => (spec.allowedTools = tools));
  if (fm.metadata !== undefined) use(lenientMetadata(fm.metadata), (m) => (skill.metadata = m));
  if (fm.license !== undefined) use(lenientField(FIELD_SCHEMAS.license, fm.license, 'license'), (l) => (skill.license = l));
  if (fm.compatibility !== undefined) use(lenientCompatibility(fm.compatibility), (c) => (skill.compatibility = c));

  // Extensions: under metadata (as text) or, the older form, at the top level; the metadata form wins.
  const ext = findExtensions({ ...fm, ...(skill.metadata ? { metadata: skill.metadata } : {}) });
  warnings.push(...ext.unknownKeys.map((w) => ({ ...w, message: `${w.message}; ignored` })), ...ext.undecodable);
  for (const extension of ext.twice) {
    warnings.push({ field: extension, message: `is given twice; metadata.${metadataKey(extension)} is the one read` });
  }
  for (const [extension, found] of Object.entries(ext.found)) {
    if (found.form === 'top-level') {
      warnings.push({
        field: extension,
        message: `read from the top level; the specification puts it under metadata as ${metadataKey(extension as Extension)}`,
      });
    }
  }
  const { model, 'max-turns': maxTurns, triggers, not_for: notFor, scripts, approval, session } = ext.found;
  const output = ext.found['output-schema'];
  if (output) use(lenientField(FIELD_SCHEMAS['output-schema'], output.raw, output.field), (schema) => (spec.outputSchema = schema));
  if (session) use(lenientField(FIELD_SCHEMAS.session, session.raw, session.field), (on) => on && (spec.session = true));
  const { delegates } = ext.found;
  if (delegates)
    use(lenientField(FIELD_SCHEMAS.delegates, delegates.raw, delegates.field), (names) => names.length && (spec.delegates = names));
  if (model) use(lenientField(FIELD_SCHEMAS.model, model.raw, model.field), (tier) => (spec.tier = tier));
  if (maxTurns) use(lenientField(FIELD_SCHEMAS['max-turns'], maxTurns.raw, maxTurns.field), (n) => (spec.maxTurns = n));
  if (triggers) use(lenientAsks(triggers.field, triggers.raw), (t) => (spec.triggers = t));
  if (notFor) use(lenientAsks(notFor.field, notFor.raw), (t) => (spec.notFor = t));
  if (scripts) use(lenientScripts(scripts.raw, source.files, scripts.field), (list) => (spec.scripts = list));
  if (approval) {
    use(lenientAllowedTools(approval.raw, approval.field), (tools) => {
      spec.approval = tools.filter((tool) => spec.allowedTools.includes(tool));
      for (const tool of tools.filter((t) => !spec.allowedTools.includes(t)))
        warnings.push({ field: approval.field, message: `'${tool}' is not in allowed-tools; ignored` });
    });
  }
  if (skill.body.trim() === '') warnings.push({ field: 'body', message: 'is empty: the skill has no procedure' });
  return { ok: true, skill, warnings };
}

/** The frontmatter's name when valid (warning when it differs from the folder), else the folder's, else a slug of it. */
function resolveName(raw: unknown, folder: string | undefined, warnings: SkillFieldError[]): string | undefined {
  const valid = (s: unknown): s is string => typeof s === 'string' && s.length <= 64 && SKILL_NAME_PATTERN.test(s);
  if (valid(raw)) {
    if (folder !== undefined && folder !== raw)
      warnings.push({ field: 'name', message: `differs from its folder '${folder}'; the skill is named '${raw}'` });
    return raw;
  }
  const slug =
    typeof raw === 'string'
      ? raw
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .slice(0, 64)
          .replace(/^-+|-+$/g, '')
      : '';
  const name = valid(folder) ? folder : valid(slug) ? slug : undefined;
  if (name) {
    const why = raw === undefined ? 'is missing' : `'${String(raw)}' is not a valid skill name`;
    warnings.push({ field: 'name', message: `${why}; using '${name}'` });
  }
  return name;
}
