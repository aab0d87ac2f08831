import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cadenzaCache } from '../config/cache-dir.ts';

/** The Temporal CLI binary: TEMPORAL_CLI, the bootstrap cache, or `temporal` on PATH. */
export function resolveTemporalCli(env: Record<string, string | undefined> = process.env): string {
  const cache = cadenzaCache(env);
  const candidates = [
    env.TEMPORAL_CLI,
    join(cache, 'bin', 'temporal'),
    ...(env.PATH ?? '').split(delimiter).map((d) => join(d, 'temporal')),
  ];
  const found = candidates.find((p): p is string => !!p && existsSync(p));
  if (!found)
    throw new Error('no Temporal CLI found: run scripts/bootstrap.sh, set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to a running server');
  return found;
}
