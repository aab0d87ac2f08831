import { sql, type Kysely } from 'kysely';
import type { Database, ProviderSecretRow } from './schema.ts';

/** Whose key a row is: one user's, or (no userId) the whole tenant's. */
export type SecretScope = { tenantId: string; userId?: string };

/** The sealed form of one key, as the cipher writes it. */
export type SealedRow = { keyId: string; nonce: Buffer; ciphertext: Buffer };

/** The row columns naming a scope. */
export const scopeColumns = (s: SecretScope) =>
  ({ tenant_id: s.tenantId, scope: s.userId === undefined ? 'tenant' : 'user', user_id: s.userId ?? '' }) as const;

/** Stores or replaces the sealed key of a provider in a scope; says whether it is new. */
export async function putProviderSecret(
  db: Kysely<Database>,
  scope: SecretScope,
  provider: string,
  sealed: SealedRow,
): Promise<{ setAt: Date; created: boolean }> {
  const row = await db
    .insertInto('provider_secrets')
    .values({ ...scopeColumns(scope), provider, key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext })
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'scope', 'user_id', 'provider'])
        .doUpdateSet({ key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, updated_at: new Date() }),
    )
    // xmax is 0 on a row this statement inserted, set on one it updated.
    .returning(['provider', 'created_at', 'updated_at', sql<boolean>`(xmax = 0)`.as('created')])
    .executeTakeFirstOrThrow();
  return { setAt: row.updated_at, created: row.created };
}

/** The scope's keys, by provider (rows hold ciphertext only). */
export async function listProviderSecrets(db: Kysely<Database>, scope: SecretScope): Promise<ProviderSecretRow[]> {
  const s = scopeColumns(scope);
  return db
    .selectFrom('provider_secrets')
    .selectAll()
    .where('tenant_id', '=', s.tenant_id)
    .where('scope', '=', s.scope)
    .where('user_id', '=', s.user_id)
    .orderBy('provider')
    .execute();
}

/** Deletes a scope's key of a provider; false when there was none. */
export async function deleteProviderSecret(db: Kysely<Database>, scope: SecretScope, provider: string): Promise<boolean> {
  const s = scopeColumns(scope);
  const res = await db
    .deleteFrom('provider_secrets')
    .where('tenant_id', '=', s.tenant_id)
    .where('scope', '=', s.scope)
    .where('user_id', '=', s.user_id)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** The user's and the tenant's rows for these providers (the lookup picks the user's first). */
export async function findProviderSecrets(
  db: Kysely<Database>,
  owner: { tenantId: string; userId: string },
  providers: readonly string[],
): Promise<ProviderSecretRow[]> {
  if (providers.length === 0) return [];
  return db
    .selectFrom('provider_secrets')
    .selectAll()
    .where('tenant_id', '=', owner.tenantId)
    .where('provider', 'in', providers)
    .where((eb) => eb.or([eb.and([eb('scope', '=', 'user'), eb('user_id', '=', owner.userId)]), eb('scope', '=', 'tenant')]))
    .execute();
}

/** Rows sealed under another key than `keyId`, a page at a time (for re-encryption after a rotation). */
export async function providerSecretsNotUnder(db: Kysely<Database>, keyId: string, limit: number): Promise<ProviderSecretRow[]> {
  return db.selectFrom('provider_secrets').selectAll().where('key_id', '!=', keyId).limit(limit).execute();
}

/** Replaces a row's sealed value only if it is still sealed under `fromKeyId` (a concurrent PUT wins). */
export async function resealProviderSecret(
  db: Kysely<Database>,
  row: ProviderSecretRow,
  fromKeyId: string,
  sealed: SealedRow,
): Promise<boolean> {
  const res = await db
    .updateTable('provider_secrets')
    .set({ key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext })
    .where('tenant_id', '=', row.tenant_id)
    .where('scope', '=', row.scope)
    .where('user_id', '=', row.user_id)
    .where('provider', '=', row.provider)
    .where('key_id', '=', fromKeyId)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}
