import type { Owner } from '../db/owner.ts';
import { tenantAppSwitches } from '../db/tenant-apps.ts';
import { SecretCipherError } from '../secrets/secret-cipher.ts';
import type { ToolDefinition } from '../tools/app-registry.ts';
import { appEnabled } from '../tools/availability.ts';
import type { ActivityDeps } from './deps.ts';

/** The provider keys a call needs, or why the tool became unavailable since its mission's catalog was frozen. */
export type ToolAccess = { ok: true; providerKeys: Map<string, string> } | { ok: false; error: string };

/**
 * Re-checks, at call time, what may have changed after prepareMission (the app disabled, a key deleted) and resolves
 * the keys by the lookup order. The keys live only in the returned map, inside this activity; messages name providers,
 * never values.
 */
export async function resolveToolAccess(
  { db, registry, secrets }: Pick<ActivityDeps, 'db' | 'registry' | 'secrets'>,
  owner: Owner,
  tool: ToolDefinition,
  /** The tenant's app switches when the caller read them already (the call's start statement does), else read here. */
  switches?: ReadonlyMap<string, boolean>,
): Promise<ToolAccess> {
  const app = registry.getApp(tool.appId);
  if (!app || !appEnabled(app, switches ?? (await tenantAppSwitches(db, owner.tenantId))))
    return unavailable(`${tool.qualifiedName}: its app ${tool.appId} was disabled for this tenant`);
  const providerKeys = new Map<string, string>();
  for (const provider of tool.providers) {
    if (provider.noApiKey) continue;
    let found: Awaited<ReturnType<typeof secrets.resolve>>;
    try {
      found = await secrets.resolve(owner, provider.id);
    } catch (err) {
      if (!(err instanceof SecretCipherError)) throw err;
      return unavailable(`${tool.qualifiedName}: the stored key of provider ${provider.id} cannot be read on this server`);
    }
    if (!found) return unavailable(`${tool.qualifiedName}: no API key for provider ${provider.id} is set any more`);
    providerKeys.set(provider.id, found.value);
  }
  return { ok: true, providerKeys };
}

const unavailable = (why: string): ToolAccess => ({ ok: false, error: `tool became unavailable: ${why}` });
