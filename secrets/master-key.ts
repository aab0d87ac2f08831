import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.ts';
import { createSecretCipher, decodeMasterKey, type SecretCipher } from './secret-cipher.ts';

/** The file under DATA_DIR where the embedded stack keeps the master key it generated. */
export const EMBEDDED_KEY_FILE = 'secrets-master.key';

/**
 * The cipher for provider keys: SECRETS_MASTER_KEY when set (config has checked each entry); else, for the embedded
 * stack only, a key generated once and kept under the data dir; else none (user and tenant keys cannot be stored).
 */
export async function resolveSecretCipher(opts: {
  masterKeys: readonly string[];
  dataDir: string;
  embedded: boolean;
  logger: Logger;
}): Promise<SecretCipher | undefined> {
  if (opts.masterKeys.length > 0) return createSecretCipher(opts.masterKeys.map((k) => decodeMasterKey(k)!));
  if (!opts.embedded) {
    opts.logger.warn(
      'SECRETS_MASTER_KEY is not set: user and tenant provider keys cannot be stored or read; only PROVIDER_KEY_<ID> applies',
    );
    return undefined;
  }
  const file = join(opts.dataDir, EMBEDDED_KEY_FILE);
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing !== undefined) {
    const key = decodeMasterKey(existing);
    if (!key) throw new Error(`${file} does not hold a 32-byte master key (base64 or 64 hex digits)`);
    opts.logger.info('secrets: using the master key kept in the data dir (set SECRETS_MASTER_KEY in production)', { file });
    return createSecretCipher([key]);
  }
  const key = randomBytes(32);
  await mkdir(opts.dataDir, { recursive: true });
  // 'wx': two processes starting at once must not overwrite each other's key.
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  opts.logger.info('secrets: generated a master key and keep it in the data dir (set SECRETS_MASTER_KEY in production)', { file });
  return createSecretCipher([key]);
}
