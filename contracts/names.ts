/** Pure naming rules shared by skills, tools and the workflow: no imports, no I/O. */

/** Skill names: lowercase letters and digits joined by single hyphens (the Agent Skills rule). */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** App ids: kebab-case, at most 32 characters. */
export const APP_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const APP_ID_MAX_LENGTH = 32;

/** Tool names inside an app: lowercase letters, digits and underscores, 1–48 characters. */
export const TOOL_NAME_PATTERN = /^[a-z0-9_]{1,48}$/;

/** The providers' rule for model-facing tool names. */
export const MODEL_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MODEL_TOOL_NAME_MAX = 64;

/** A qualified tool name `<app-id>.<tool-name>` split into its parts. */
export type QualifiedToolName = { appId: string; tool: string };

/** Whether `s` is a valid app id. */
export function isAppId(s: string): boolean {
  return s.length <= APP_ID_MAX_LENGTH && APP_ID_PATTERN.test(s);
}

/** Splits `<app-id>.<tool-name>`, or returns undefined when either part is invalid. */
export function parseQualifiedToolName(s: string): QualifiedToolName | undefined {
  const dot = s.indexOf('.');
  if (dot < 0) return undefined;
  const appId = s.slice(0, dot);
  const tool = s.slice(dot + 1);
  if (!isAppId(appId) || !TOOL_NAME_PATTERN.test(tool)) return undefined;
  return { appId, tool };
}

/**
 * The model-facing name of a qualified tool name, e.g. `weather.get_forecast` → `weather__get_forecast`;
 * names over 64 characters are truncated and suffixed with a hash of the full name. Throws on an invalid name.
 */
export function toModelToolName(qualified: string): string {
  const parsed = parseQualifiedToolName(qualified);
  if (!parsed) throw new TypeError(`not a qualified tool name <app-id>.<tool-name>: ${JSON.stringify(qualified)}`);
  // App ids never contain '_', so the first '__' marks the boundary and the mapping stays injective.
  const name = `${parsed.appId}__${parsed.tool}`;
  if (name.length <= MODEL_TOOL_NAME_MAX) return name;
  const suffix = `_${fnv1a32(qualified)}`;
  return name.slice(0, MODEL_TOOL_NAME_MAX - suffix.length) + suffix;
}

// A pure hash (no node:crypto) so workflow code may import this module and stay deterministic.
function fnv1a32(s: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    hash ^= s.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** Provider ids: a provider's name lowercased, runs of other characters turned into `_` (`Open Meteo` → `open_meteo`). */
export const PROVIDER_ID_PATTERN = /^[a-z0-9]+(_[a-z0-9]+)*$/;

/** The id of a provider named in an app's `providers:` (and in `/secrets/:provider`, `${provider.<id>}`). */
export function providerId(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The server-wide environment variable holding a provider's key: `PROVIDER_KEY_<ID>` (`PROVIDER_KEY_OPEN_METEO`). */
export const providerKeyVariable = (id: string): string => `PROVIDER_KEY_${id.toUpperCase()}`;

/** Whether an `allowed-tools` entry is a qualified tool name or a whole app (`<app-id>.*`). */
export function isAllowedToolEntry(s: string): boolean {
  return parseQualifiedToolName(s) !== undefined || appWildcard(s) !== undefined;
}

/** The app id of an `<app-id>.*` entry, else undefined. */
export function appWildcard(s: string): string | undefined {
  if (!s.endsWith('.*')) return undefined;
  const appId = s.slice(0, -2);
  return isAppId(appId) ? appId : undefined;
}
