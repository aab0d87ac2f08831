import { readYaml, splitSkillMd, type SkillFieldError } from './frontmatter.ts';
import { lenientAllowedTools, lenientAsks, lenientField, lenientMetadata, lenientScripts } from './lenient-fields.ts';
import type { Tier } from '../contracts/model.ts';
import { SKILL_NAME_PATTERN } from '../contracts/names.ts';
import { KNOWN_FIELDS, misspeltFields } from './skill-schema.ts';
import type { ParsedSkill, SkillSource } from './skill-md.ts';
import { quoteColonScalars } from './yaml-recovery.ts';

/** An imported skill with the warnings its reading raised (kept as the import's audit record), or why it was refused. */
export type ImportResult = { ok: true; skill: ParsedSkill; warnings: SkillFieldError[] } | { ok: false; errors: SkillFieldError[] };

/**
 * Reads a SKILL.md written elsewhere leniently, as the Agent Skills client guide advises: problems become warnings
 * and the field is dropped or repaired; only a frontmatter that stays unparseable, or no description, is refused.
 * The returned frontmatter holds the values Cadenza uses (the file itself is kept verbatim by the caller).
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

  const misspelt = new Map(misspeltFields(fm).map((e) => [e.field, e.message]));
  for (const key of Object.keys(fm)) {
    if (!KNOWN_FIELDS.includes(key)) warnings.push({ field: key, message: misspelt.get(key) ?? 'unknown field; kept, not used' });
  }

  const frontmatter: Record<string, unknown> = { ...fm, name };
  const skill: ParsedSkill = { name, description: description.trim(), allowedTools: [], body: split.body ?? '', frontmatter };
  const use = <T>(field: string, read: { value: T | undefined; warnings: SkillFieldError[] }, set: (value: T) => void) => {
    warnings.push(...read.warnings);
    if (read.value === undefined) delete frontmatter[field];
    else set(read.value);
  };
  if (fm['allowed-tools'] !== undefined) {
    use('allowed-tools', lenientAllowedTools(fm['allowed-tools']), (tools) => {
      skill.allowedTools = tools;
      // The mission engine reads this normalised string, whatever form the file used.
      frontmatter['allowed-tools'] = tools.join(' ');
    });
  }
  if (fm.metadata !== undefined) use('metadata', lenientMetadata(fm.metadata), (m) => ((skill.metadata = m), (frontmatter.metadata = m)));
  if (fm.triggers !== undefined)
    use('triggers', lenientAsks('triggers', fm.triggers), (t) => ((skill.triggers = t), (frontmatter.triggers = t)));
  if (fm.not_for !== undefined) use('not_for', lenientAsks('not_for', fm.not_for), (t) => ((skill.notFor = t), (frontmatter.not_for = t)));
  if (fm.scripts !== undefined)
    use('scripts', lenientScripts(fm.scripts, source.files), (s) => ((skill.scripts = s), (frontmatter.scripts = s)));
  if (fm.model !== undefined) use('model', lenientField('model', fm.model), (m) => (skill.model = m as Tier));
  if (fm['max-turns'] !== undefined) use('max-turns', lenientField('max-turns', fm['max-turns']), (n) => (skill.maxTurns = n as number));
  if (fm.license !== undefined) use('license', lenientField('license', fm.license), (l) => (skill.license = l as string));
  if (fm.compatibility !== undefined)
    use('compatibility', lenientField('compatibility', fm.compatibility), (c) => (skill.compatibility = c as string));
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
