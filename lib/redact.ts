/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

const MAX_DEPTH = 8;

/**
 * A copy of a log value with secrets removed: fields named like a secret (`apiKey`, `MODEL_API_KEY`, `authorization`,
 * `*secret*`, `*token`, `*password*`, `cookie`...) become `[redacted]`, and so do the password of a URL and a bearer
 * token inside any string. Errors become plain objects that keep name, message, stack, code and their `cause`.
 */
export function redact(value: unknown): unknown {
  return copy(value, 0, new WeakSet());
}

/** True for a field name that holds a secret. Counts (`inputTokens`, `maxTokens`) are not secrets. */
export function isSecretName(name: string): boolean {
  const n = name.toLowerCase().replace(/[^a-z]/g, '');
  return n.endsWith('key') || n.endsWith('keys') || n.endsWith('token') || /secret|password|passwd|authorization|cookie|credential/.test(n);
}

function copy(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  seen.add(value);
  try {
    if (value instanceof Error) return copyError(value, depth, seen);
    if (value instanceof Date) return value.toISOString();
    if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
    if (Array.isArray(value)) return value.map((v) => copy(v, depth + 1, seen));
    if (value instanceof Map) return copy(Object.fromEntries(value), depth, seen);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = isSecretName(k) && v != null && v !== '' ? REDACTED : copy(v, depth + 1, seen);
    return out;
  } finally {
    seen.delete(value);
  }
}

function copyError(err: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: err.name, message: scrub(err.message) };
  if (err.stack) out.stack = scrub(err.stack);
  for (const [k, v] of Object.entries(err)) {
    if (k in out) continue;
    out[k] = isSecretName(k) && v != null ? REDACTED : copy(v, depth + 1, seen);
  }
  if (err.cause !== undefined) out.cause = copy(err.cause, depth + 1, seen);
  if (err instanceof AggregateError) out.errors = err.errors.map((e: unknown) => copy(e, depth + 1, seen));
  return out;
}

/** Removes credentials from free text: `scheme://user:password@host` and `Bearer <token>`. */
function scrub(s: string): string {
  return s
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${REDACTED}@`)
    .replace(/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${REDACTED}`);
}
