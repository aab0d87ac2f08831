import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the setup (scripts/bootstrap.sh) caches what it downloads: CADENZA_CACHE, else the XDG cache's `cadenza`. */
export const cadenzaCache = (env: Record<string, string | undefined>) =>
  env.CADENZA_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'cadenza');
