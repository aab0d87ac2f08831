import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
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

export async function revokeApiKey(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
}
