import type { Kysely } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, ProfileRow } from './schema.ts';

/** What a profile holds; every field optional, preferences free-form. */
export type Profile = { company?: string | null; role?: string | null; brandVoice?: string | null; preferences?: Record<string, unknown> };

export async function getProfile(db: Kysely<Database>, owner: Owner): Promise<ProfileRow | undefined> {
  return db.selectFrom('profiles').selectAll().where(whereOwner(owner)).executeTakeFirst();
}

/** Replaces the owner's profile (fields left out are cleared). */
export async function putProfile(db: Kysely<Database>, owner: Owner, p: Profile): Promise<ProfileRow> {
  const values = {
    company: p.company ?? null,
    role: p.role ?? null,
    brand_voice: p.brandVoice ?? null,
    preferences: JSON.stringify(p.preferences ?? {}),
    updated_at: new Date(),
  };
  return db
    .insertInto('profiles')
    .values({ tenant_id: owner.tenantId, user_id: owner.userId, ...values })
    .onConflict((oc) => oc.columns(['tenant_id', 'user_id']).doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
}
