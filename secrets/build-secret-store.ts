import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import { resolveSecretCipher } from './master-key.ts';
import { createPostgresSecretBackend } from './postgres-backend.ts';
import { createSecretStore, type SecretStore } from './secret-store.ts';
import { createVaultSecretBackend } from './vault-backend.ts';

/** The process's SecretStore: Postgres under the master key (or Vault), then the server's PROVIDER_KEY_<ID> variables. */
export async function buildSecretStore(opts: {
  db: Kysely<Database>;
  config: Pick<Config, 'secrets' | 'dataDir'>;
  /** The embedded stack (bin/cadenza.ts) may generate and keep a master key under DATA_DIR. */
  embedded: boolean;
  logger: Logger;
}): Promise<SecretStore> {
  const { vault, providerKeys } = opts.config.secrets;
  if (opts.config.secrets.backend === 'vault' && vault) {
    opts.logger.info('secrets: provider keys are kept in Vault KV v2', {
      address: vault.address,
      mount: vault.mount,
      prefix: vault.prefix,
    });
    return createSecretStore(createVaultSecretBackend(vault), providerKeys);
  }
  const cipher = await resolveSecretCipher({
    masterKeys: opts.config.secrets.masterKeys,
    dataDir: opts.config.dataDir,
    embedded: opts.embedded,
    logger: opts.logger,
  });
  return createSecretStore(createPostgresSecretBackend(opts.db, cipher), providerKeys);
}
