/**
 * A JSON value with every object's keys in the order Postgres returns a `jsonb` value's: shorter keys first (by
 * their UTF-8 bytes), then bytewise. What a process keeps in memory in this order reads the same as what it stored.
 */
export function jsonbOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map(jsonbOrder) as T;
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value)
    .map((k) => ({ k, bytes: Buffer.byteLength(k) }))
    .sort((a, b) => a.bytes - b.bytes || byteCompare(a, b));
  const out: Record<string, unknown> = {};
  for (const { k } of keys) out[k] = jsonbOrder((value as Record<string, unknown>)[k]);
  return out as T;
}

// ASCII keys (the usual case) compare as JS strings do; others by their UTF-8 bytes, as Postgres does.
const byteCompare = (a: { k: string; bytes: number }, b: { k: string; bytes: number }) =>
  a.bytes === a.k.length && b.bytes === b.k.length
    ? a.k < b.k
      ? -1
      : a.k > b.k
        ? 1
        : 0
    : Buffer.compare(Buffer.from(a.k), Buffer.from(b.k));
