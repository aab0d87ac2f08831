import type { Kysely } from 'kysely';
import {
  deleteProviderSecret,
  findProviderSecrets,
  listProviderSecrets,
  putProviderSecret,
  scopeColumns,
  type SecretScope,
} from '../db/provider-secrets.ts';
import type { Database, ProviderSecretRow } from '../db/schema.ts';
import type { SecretBackend } from './secret-backend.ts';
import type { SecretCipher } from './secret-cipher.ts';

/** Thrown by writes when no master key is configured. */
export class SecretsUnavailableError extends Error {
  override name = 'SecretsUnavailableError';
  constructor() {
    super('provider keys cannot be stored: SECRETS_MASTER_KEY is not set on this server');
  }
}

/** The authenticated data of a row: a sealed value copied onto another owner's or provider's row will not open. */
export const secretAad = (r: Pick<ProviderSecretRow, 'tenant_id' | 'scope' | 'user_id' | 'provider'>): string =>
  ['cadenza-secret-v1', r.tenant_id, r.scope, r.user_id, r.provider].join('\u0000');

const rowKey = (s: SecretScope, provider: string) => ({ ...scopeColumns(s), provider });

/** User and tenant keys in Postgres, AES-256-GCM sealed under the master key; no cipher: nothing can be written. */
export function createPostgresSecretBackend(db: Kysely<Database>, cipher: SecretCipher | undefined): SecretBackend {
  return {
    writable: cipher !== undefined,
    async put(scope, provider, value) {
      if (!cipher) throw new SecretsUnavailableError();
      return putProviderSecret(db, scope, provider, cipher.seal(value, secretAad(rowKey(scope, provider))));
    },
    async list(scope) {
      return (await listProviderSecrets(db, scope)).map((r) => ({ provider: r.provider, setAt: r.updated_at }));
    },
    delete: (scope, provider) => deleteProviderSecret(db, scope, provider),
    async present(owner, providers) {
      const found = new Map<string, 'user' | 'tenant'>();
      for (const r of await findProviderSecrets(db, owner, providers)) {
        if (r.scope === 'user' || !found.has(r.provider)) found.set(r.provider, r.scope);
      }
      return found;
    },
    async read(owner, provider) {
      const rows = await findProviderSecrets(db, owner, [provider]);
      const row = rows.find((r) => r.scope === 'user') ?? rows.find((r) => r.scope === 'tenant');
      if (!row) return undefined;
      if (!cipher) throw new SecretsUnavailableError();
      return { value: cipher.open({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext }, secretAad(row)), source: row.scope };
    },
  };
}
