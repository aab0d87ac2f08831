import type { Kysely } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, IntegrationRow } from './schema.ts';

/** The statuses an integration can have; only `active` opens the tools that require its account. */
export const INTEGRATION_STATUSES = ['active', 'inactive'] as const;
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

export async function listIntegrations(db: Kysely<Database>, owner: Owner): Promise<IntegrationRow[]> {
  return db.selectFrom('integrations').selectAll().where(whereOwner(owner)).orderBy('provider').execute();
}

/** Connects a provider or changes its status; returns the row and whether it is new. */
export async function putIntegration(
  db: Kysely<Database>,
  owner: Owner,
  provider: string,
  status: IntegrationStatus,
): Promise<{ row: IntegrationRow; created: boolean }> {
  const existed = await db
    .selectFrom('integrations')
    .select('provider')
    .where(whereOwner(owner))
    .where('provider', '=', provider)
    .executeTakeFirst();
  const row = await db
    .insertInto('integrations')
    .values({ tenant_id: owner.tenantId, user_id: owner.userId, provider, status })
    .onConflict((oc) => oc.columns(['tenant_id', 'user_id', 'provider']).doUpdateSet({ status, updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, created: !existed };
}

/** Disconnects a provider; false when the owner had no such integration. */
export async function deleteIntegration(db: Kysely<Database>, owner: Owner, provider: string): Promise<boolean> {
  const res = await db.deleteFrom('integrations').where(whereOwner(owner)).where('provider', '=', provider).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** The providers whose integration is active for this owner. */
export async function activeProviders(db: Kysely<Database>, owner: Owner): Promise<Set<string>> {
  const rows = await db.selectFrom('integrations').select('provider').where(whereOwner(owner)).where('status', '=', 'active').execute();
  return new Set(rows.map((r) => r.provider));
}
