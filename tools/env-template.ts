import { PROVIDER_ID_PATTERN } from '../contracts/names.ts';

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROVIDER_PREFIX = 'provider.';

/** Whether a string holds at least one `${...}` placeholder. */
export function hasPlaceholders(template: string): boolean {
  return template.includes('${');
}

/** A placeholder's meaning: an environment variable, or the key of one of the app's providers. */
export type Placeholder = { kind: 'env'; name: string } | { kind: 'provider'; id: string };

function parsePlaceholder(inner: string): Placeholder | undefined {
  if (inner.startsWith(PROVIDER_PREFIX)) {
    const id = inner.slice(PROVIDER_PREFIX.length);
    return PROVIDER_ID_PATTERN.test(id) ? { kind: 'provider', id } : undefined;
  }
  return ENV_NAME.test(inner) ? { kind: 'env', name: inner } : undefined;
}

/** Why a template's placeholders are malformed, or undefined when they are all `${NAME}` or `${provider.<id>}`. */
export function templateProblem(template: string): string | undefined {
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!parsePlaceholder(match[1] ?? '')) return `malformed placeholder ${match[0]} (expected \${NAME} or \${provider.<id>})`;
  }
  if (template.replace(PLACEHOLDER, '').includes('${')) return `unclosed placeholder '\${' (expected \${NAME})`;
  return undefined;
}

/** The provider ids a template's `${provider.<id>}` placeholders name. */
export function providerPlaceholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].flatMap((m) => {
    const p = parsePlaceholder(m[1] ?? '');
    return p?.kind === 'provider' ? [p.id] : [];
  });
}

/** A filled template, or the placeholder that had no value (never a value). */
export type FilledTemplate = { ok: true; value: string } | { ok: false; missing: string };

/** What fills placeholders at call time: the environment for `${NAME}`, the resolved provider keys for the rest. */
export type TemplateValues = { env: Record<string, string | undefined>; providerKeys?: ReadonlyMap<string, string> };

/** Replaces every placeholder, read at call time so secrets never sit in the registry or in workflow history. */
export function fillTemplate(template: string, values: TemplateValues): FilledTemplate {
  let missing: string | undefined;
  const value = template.replace(PLACEHOLDER, (whole, inner: string) => {
    const p = parsePlaceholder(inner);
    const found = p?.kind === 'provider' ? values.providerKeys?.get(p.id) : p ? values.env[p.name] : undefined;
    if (found === undefined || found === '') {
      missing ??= p?.kind === 'provider' ? `key of provider ${p.id}` : (p?.name ?? whole);
      return '';
    }
    return found;
  });
  return missing === undefined ? { ok: true, value } : { ok: false, missing };
}
