import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** One stored listing: the server's tools as it described them, or the reason it could not list them. */
export type McpListingRecord = { appId: string; listedAt: Date; tools: unknown[]; error: string | null };

/** Stores the latest listing of an app's MCP server (the last worker to load it wins). */
export async function putMcpListing(db: Kysely<Database>, r: McpListingRecord): Promise<void> {
  const values = { tools: JSON.stringify(r.tools), error: r.error, listed_at: r.listedAt };
  await db
    .insertInto('mcp_listings')
    .values({ app_id: r.appId, ...values })
    .onConflict((oc) => oc.column('app_id').doUpdateSet(values))
    .execute();
}

/** The stored listings of the given apps. */
export async function readMcpListings(db: Kysely<Database>, appIds: readonly string[]): Promise<McpListingRecord[]> {
  if (appIds.length === 0) return [];
  const rows = await db.selectFrom('mcp_listings').selectAll().where('app_id', 'in', appIds).execute();
  return rows.map((r) => ({ appId: r.app_id, listedAt: r.listed_at, tools: Array.isArray(r.tools) ? r.tools : [], error: r.error }));
}
