import type { Kysely } from 'kysely';
import type { Database, TenantAppRow } from './schema.ts';

/** Records an admin's decision to enable or disable an app for a tenant. */
export async function setTenantApp(db: Kysely<Database>, tenantId: string, appId: string, enabled: boolean): Promise<TenantAppRow> {
  return db
    .insertInto('tenant_apps')
    .values({ tenant_id: tenantId, app_id: appId, enabled })
    .onConflict((oc) => oc.columns(['tenant_id', 'app_id']).doUpdateSet({ enabled, updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The tenant's decisions, by app id; an app without one follows its `default_enabled`. */
export async function tenantAppSwitches(db: Kysely<Database>, tenantId: string): Promise<Map<string, boolean>> {
  const rows = await db.selectFrom('tenant_apps').select(['app_id', 'enabled']).where('tenant_id', '=', tenantId).execute();
  return new Map(rows.map((r) => [r.app_id, r.enabled]));
}
