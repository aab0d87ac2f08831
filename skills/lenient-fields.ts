import type { z } from 'zod';
import { isAllowedToolEntry } from '../contracts/names.ts';
import type { SkillFieldError } from './frontmatter.ts';
import type { SkillScript } from '../contracts/skill-spec.ts';
import { FIELD_SCHEMAS } from './skill-schema.ts';

/** One field read leniently: its usable value (undefined drops it) and what was wrong with it. */
type Lenient<T> = { value: T | undefined; warnings: SkillFieldError[] };

const warn = (field: string, message: string): SkillFieldError => ({ field, message });

/** Tools as a space- or comma-separated string or a list; entries that are not `<app-id>.<tool-name>` are dropped. */
export function lenientAllowedTools(raw: unknown, field = 'allowed-tools'): Lenient<string[]> {
  const warnings: SkillFieldError[] = [];
  let entries: unknown[];
  if (typeof raw === 'string') {
    if (raw.includes(',')) warnings.push(warn(field, 'comma-separated; read as a list (the specification separates entries with spaces)'));
    entries = raw.split(/[\s,]+/).filter((e) => e !== '');
  } else if (Array.isArray(raw)) {
    warnings.push(warn(field, 'given as a YAML list; the specification writes a space-separated string'));
    entries = raw;
  } else {
    return { value: undefined, warnings: [warn(field, 'is neither a string nor a list; ignored')] };
  }
  const tools: string[] = [];
  for (const entry of entries) {
    if (typeof entry === 'string' && isAllowedToolEntry(entry)) tools.push(entry);
    else warnings.push(warn(field, `'${String(entry)}' is not a Cadenza tool (<app-id>.<tool-name> or <app-id>.*); ignored`));
  }
  return { value: [...new Set(tools)], warnings };
}

/** `metadata` as string → string: numbers and booleans are turned into strings, other values dropped. */
export function lenientMetadata(raw: unknown): Lenient<Record<string, string>> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { value: undefined, warnings: [warn('metadata', 'is not a mapping; ignored')] };
  const value: Record<string, string> = {};
  const warnings: SkillFieldError[] = [];
  for (const [key, v] of Object.entries(raw)) {
    if (typeof v === 'string') value[key] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') {
      value[key] = String(v);
      warnings.push(warn('metadata', `'${key}' is not a string; read as '${String(v)}'`));
    } else warnings.push(warn('metadata', `'${key}' is not a string; ignored`));
  }
  return { value, warnings };
}

/** `triggers` / `not_for`: a single string becomes a one-item list; entries that are not text are dropped. */
export function lenientAsks(field: string, raw: unknown): Lenient<string[]> {
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list)) return { value: undefined, warnings: [warn(field, 'is not a list of asks; ignored')] };
  const asks = list.filter((a): a is string => typeof a === 'string' && a.trim() !== '').map((a) => a.trim());
  const warnings = asks.length < list.length ? [warn(field, 'entries that are not text were ignored')] : [];
  return { value: asks.slice(0, 50), warnings };
}

/** `scripts`: entries that are invalid, or whose file the bundle lacks, are dropped with a warning each. */
export function lenientScripts(raw: unknown, files: string[] | undefined, field = 'scripts'): Lenient<SkillScript[]> {
  if (!Array.isArray(raw)) return { value: undefined, warnings: [warn(field, 'is not a list of {name, path} entries; ignored')] };
  const present = new Set(files ?? []);
  const value: SkillScript[] = [];
  const warnings: SkillFieldError[] = [];
  for (const entry of raw) {
    const parsed = FIELD_SCHEMAS.scripts.unwrap().safeParse([entry]);
    const script = parsed.success ? parsed.data[0] : undefined;
    if (!script) warnings.push(warn(field, `${JSON.stringify(entry)} is not a valid {name, path, description?} entry; ignored`));
    else if (!present.has(script.path)) warnings.push(warn(field, `'${script.path}' is not in the bundle; ${script.name} ignored`));
    else if (value.some((s) => s.name === script.name))
      warnings.push(warn(field, `'${script.name}' is declared twice; the second is ignored`));
    else value.push(script);
  }
  return { value, warnings };
}

/** Any other field: kept when its schema accepts it, else dropped with the schema's reason. */
export function lenientField<T>(schema: z.ZodType<T>, raw: unknown, field: string): Lenient<NonNullable<T>> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { value: parsed.data ?? undefined, warnings: [] };
  return { value: undefined, warnings: [warn(field, `${parsed.error.issues[0]?.message ?? 'is invalid'}; ignored`)] };
}

/** `compatibility`: over-long text is kept, with a warning (only its length is off). */
export function lenientCompatibility(raw: unknown): Lenient<string> {
  if (typeof raw === 'string' && raw.length > 500) {
    return { value: raw, warnings: [warn('compatibility', `is ${raw.length} characters, over the specification's 500`)] };
  }
  return lenientField(FIELD_SCHEMAS.compatibility, raw, 'compatibility');
}
