const PLACEHOLDER = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a string holds at least one `${NAME}` placeholder. */
export function hasPlaceholders(template: string): boolean {
  return template.includes('${');
}

/** Why a template's `${NAME}` placeholders are malformed, or undefined when they are all well formed. */
export function templateProblem(template: string): string | undefined {
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!ENV_NAME.test(match[1] ?? '')) return `malformed placeholder ${match[0]} (expected \${NAME})`;
  }
  if (template.replace(PLACEHOLDER, '').includes('${')) return `unclosed placeholder '\${' (expected \${NAME})`;
  return undefined;
}

/** A filled template, or the name of the first variable that is unset or empty (never its value). */
export type FilledTemplate = { ok: true; value: string } | { ok: false; missing: string };

/** Replaces every `${NAME}` with `env[NAME]`, read at call time so secrets never sit in the registry. */
export function fillTemplate(template: string, env: Record<string, string | undefined>): FilledTemplate {
  let missing: string | undefined;
  const value = template.replace(PLACEHOLDER, (_whole, name: string) => {
    const found = env[name];
    if (found === undefined || found === '') {
      missing ??= name;
      return '';
    }
    return found;
  });
  return missing === undefined ? { ok: true, value } : { ok: false, missing };
}
