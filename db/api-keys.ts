import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ApiKeyRow, Database } from './schema.ts';

export const CAPABILITIES = ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** Creates a key and stores only its hash; the plain key is returned once, to the caller. */
export async function createApiKey(
  db: Kysely<Database>,
  owner: { tenantId: string; userId: string; capabilities: Capability[] },
): Promise<{ id: string; key: string }> {
  const key = `cdz_${randomBytes(24).toString('base64url')}`;
  const id = randomUUID();
  await db
    .insertInto('api_keys')
    .values({
      id,
      key_hash: hashApiKey(key),
      key_prefix: key.slice(0, 8),
      tenant_id: owner.tenantId,
      user_id: owner.userId,
      capabilities: owner.capabilities,
    })
    .execute();
  return { id, key };
}

/** The live (not revoked) key row for a presented bearer, if any. */
export async function findActiveApiKey(db: Kysely<Database>, key: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashApiKey(key)).where('revoked_at', 'is', null).executeTakeFirst();
}

/** A key as an admin sees it: who it is for and what it may do, never its secret or hash. */
export type ApiKeyInfo = Omit<ApiKeyRow, 'key_hash'>;

const INFO_COLUMNS = ['id', 'key_prefix', 'tenant_id', 'user_id', 'capabilities', 'created_at', 'last_used_at', 'revoked_at'] as const;

/** Keys, newest first, optionally of one tenant, user or status, after the key `afterId` (the last of the previous page). */
export async function listApiKeys(
  db: Kysely<Database>,
  filter: { tenantId?: string; userId?: string; status?: 'active' | 'revoked' },
  page: { limit: number; afterId?: string },
): Promise<ApiKeyInfo[]> {
  let q = db.selectFrom('api_keys').select(INFO_COLUMNS);
  if (filter.tenantId !== undefined) q = q.where('tenant_id', '=', filter.tenantId);
  if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
  if (filter.status === 'active') q = q.where('revoked_at', 'is', null);
  if (filter.status === 'revoked') q = q.where('revoked_at', 'is not', null);
  if (page.afterId !== undefined) {
    const at = sql<Date>`(select c.created_at from api_keys c where c.id = ${page.afterId})`;
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', page.afterId!)])]));
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

/**
 * Revokes a key at once (the next request with it is refused): the first revocation's time stands, so revoking
 * twice is harmless. The key as it now is, or undefined when there is no such key.
 */
export async function revokeApiKey(db: Kysely<Database>, id: string): Promise<ApiKeyInfo | undefined> {
  await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return db.selectFrom('api_keys').select(INFO_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** How stale `last_used_at` may get: one write per key per minute at most, not one per request. */
export const LAST_USED_PRECISION_MS = 60_000;

/** Records that a key authenticated a request now, unless that was already recorded within the last minute. */
export async function markApiKeyUsed(db: Kysely<Database>, key: Pick<ApiKeyRow, 'id' | 'last_used_at'>, now = new Date()): Promise<void> {
  if (key.last_used_at && now.getTime() - key.last_used_at.getTime() < LAST_USED_PRECISION_MS) return;
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', key.id).execute();
}
