import type { Kysely } from 'kysely';
import { providerSecretsNotUnder, resealProviderSecret } from '../db/provider-secrets.ts';
import type { Database } from '../db/schema.ts';
import { secretAad } from './postgres-backend.ts';
import { SecretCipherError, type SecretCipher } from './secret-cipher.ts';

/** What a re-encryption pass did; `unreadable` rows are under a key SECRETS_MASTER_KEY no longer holds. */
export type ReencryptReport = {
  resealed: number;
  unreadable: Array<{ tenantId: string; scope: string; userId: string; provider: string; keyId: string }>;
};

/**
 * After a rotation (new key first in SECRETS_MASTER_KEY, old ones after it), seals every row again under the current
 * key; once it reports no unreadable rows, the old keys can be dropped from the configuration.
 */
export async function reencryptSecrets(db: Kysely<Database>, cipher: SecretCipher, pageSize = 200): Promise<ReencryptReport> {
  const report: ReencryptReport = { resealed: 0, unreadable: [] };
  const skipped = new Set<string>();
  for (;;) {
    const rows = (await providerSecretsNotUnder(db, cipher.currentKeyId, pageSize + skipped.size)).filter(
      (r) => !skipped.has(secretAad(r)),
    );
    if (rows.length === 0) return report;
    for (const row of rows) {
      let value: string;
      try {
        value = cipher.open({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext }, secretAad(row));
      } catch (err) {
        if (!(err instanceof SecretCipherError)) throw err;
        skipped.add(secretAad(row));
        report.unreadable.push({
          tenantId: row.tenant_id,
          scope: row.scope,
          userId: row.user_id,
          provider: row.provider,
          keyId: row.key_id,
        });
        continue;
      }
      if (await resealProviderSecret(db, row, row.key_id, cipher.seal(value, secretAad(row)))) report.resealed++;
    }
  }
}
