import type { Kysely } from 'kysely';
import { putMcpListing, readMcpListings } from '../../db/mcp-listings.ts';
import type { Database } from '../../db/schema.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AppRegistry } from '../app-registry.ts';
import type { McpListedTool, McpListing } from './mcp-listing.ts';
import type { McpApp, McpPool } from './mcp-pool.ts';

/**
 * The worker's load step for MCP apps: lists every declared server at once (each bounded by its `list_timeout_s`),
 * stores each listing for the other processes and gives the registry the tools. A server that fails is skipped with
 * its reason; the others load.
 */
export async function listMcpServers(deps: { registry: AppRegistry; pool: McpPool; db: Kysely<Database>; logger: Logger }): Promise<void> {
  await Promise.all(
    deps.registry.mcpApps.map(async (app) => {
      const listedAt = new Date();
      let listing: McpListing;
      try {
        listing = { appId: app.id, listedAt, ok: true, tools: await deps.pool.list(app as McpApp) };
      } catch (err) {
        listing = { appId: app.id, listedAt, ok: false, error: err instanceof Error ? err.message : String(err) };
        deps.logger.warn('MCP app skipped: its server could not be listed', { app: app.id, error: listing.error });
      }
      await putMcpListing(deps.db, {
        appId: app.id,
        listedAt,
        tools: listing.ok ? listing.tools : [],
        error: listing.ok ? null : listing.error,
      });
      deps.registry.applyMcpListing(listing);
    }),
  );
}

/** Gives the registry the listings the workers stored (the API's way to know MCP tools without starting servers). */
export async function readStoredMcpListings(db: Kysely<Database>, registry: AppRegistry): Promise<void> {
  const records = await readMcpListings(
    db,
    registry.mcpApps.map((a) => a.id),
  );
  for (const r of records) {
    registry.applyMcpListing(
      r.error === null
        ? { appId: r.appId, listedAt: r.listedAt, ok: true, tools: r.tools as McpListedTool[] }
        : { appId: r.appId, listedAt: r.listedAt, ok: false, error: r.error },
    );
  }
}
