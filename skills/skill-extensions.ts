import { readYamlValue, type SkillFieldError } from './frontmatter.ts';
import { EXTENSIONS, metadataKey, misspeltFields, type Extension } from './skill-schema.ts';

/** An extension as the SKILL.md wrote it: the field as written, its value (decoded from metadata text) and its form. */
export type FoundExtension = { field: string; raw: unknown; form: 'metadata' | 'top-level' };

/** Where each extension was written, plus what is wrong with how (the reader decides: error or warning). */
export type ExtensionsFound = {
  found: Partial<Record<Extension, FoundExtension>>;
  /** Extensions written both ways; the metadata form is the one read. */
  twice: Extension[];
  /** `cadenza-*` metadata keys Cadenza does not know (with a suggestion when one is close). */
  unknownKeys: SkillFieldError[];
  /** Metadata values that could not be decoded (a `cadenza-scripts` text that is not YAML). */
  undecodable: SkillFieldError[];
};

const PREFIX = 'cadenza-';
const KEYS = EXTENSIONS.map(metadataKey);

/**
 * Finds Cadenza's extensions in a frontmatter: under `metadata` as `cadenza-<extension>` strings (the form that passes
 * the Agent Skills validator, whose metadata maps strings to strings), or at the top level (the older form). Metadata
 * text is decoded: `cadenza-max-turns: "8"` is the number 8, `cadenza-triggers` / `cadenza-not_for` hold one ask per
 * line, `cadenza-scripts` a YAML list of `{name, path, description?}`, `cadenza-approval` space-separated tools, `cadenza-session` `"true"` or `"false"`, `cadenza-delegates` space-separated skills, `cadenza-output-schema` a JSON Schema as JSON text.
 */
export function findExtensions(frontmatter: Record<string, unknown>): ExtensionsFound {
  const result: ExtensionsFound = { found: {}, twice: [], unknownKeys: [], undecodable: [] };
  const metadata = isMapping(frontmatter.metadata) ? frontmatter.metadata : {};
  for (const extension of EXTENSIONS) {
    const key = metadataKey(extension);
    const inMetadata = Object.hasOwn(metadata, key);
    const atTop = Object.hasOwn(frontmatter, extension);
    if (inMetadata && atTop) result.twice.push(extension);
    if (inMetadata) {
      const field = `metadata.${key}`;
      const decoded = decode(extension, metadata[key]);
      if (decoded.ok) result.found[extension] = { field, raw: decoded.value, form: 'metadata' };
      else result.undecodable.push({ field, message: decoded.message });
    } else if (atTop) result.found[extension] = { field: extension, raw: frontmatter[extension], form: 'top-level' };
  }
  const unknown = Object.keys(metadata).filter((key) => key.startsWith(PREFIX) && !KEYS.includes(key));
  const misspelt = new Map(misspeltFields(unknown, KEYS).map((e) => [e.field, e.message]));
  for (const key of unknown) {
    const hint = misspelt.get(key)?.replace('unknown field; ', '') ?? `Cadenza's keys are ${KEYS.join(', ')}`;
    result.unknownKeys.push({ field: `metadata.${key}`, message: `unknown Cadenza key; ${hint}` });
  }
  return result;
}

/** Metadata values are text; a value that is not (a number the author left unquoted) goes to its schema as it is. */
function decode(extension: Extension, value: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof value !== 'string') return { ok: true, value };
  switch (extension) {
    case 'max-turns':
      return { ok: true, value: /^\s*\d+\s*$/.test(value) ? Number(value) : value };
    case 'session':
      return { ok: true, value: value.trim() === 'true' ? true : value.trim() === 'false' ? false : value };
    case 'triggers':
    case 'not_for':
      return { ok: true, value: value.split('\n').flatMap((line) => (line.trim() === '' ? [] : [line.trim()])) };
    case 'scripts': {
      const read = readYamlValue(value);
      if (!read.ok) return { ok: false, message: `must hold a YAML list of {name, path, description?}: ${read.message}` };
      return { ok: true, value: read.value };
    }
    case 'output-schema':
      try {
        return { ok: true, value: JSON.parse(value) };
      } catch (err) {
        return { ok: false, message: `must hold a JSON Schema as JSON text: ${(err as Error).message}` };
      }
    default:
      return { ok: true, value: value.trim() };
  }
}

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
