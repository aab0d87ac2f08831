import type { Kysely } from 'kysely';
import { activeProviders } from '../db/integrations.ts';
import type { Owner } from '../db/owner.ts';
import type { Database } from '../db/schema.ts';
import { tenantAppSwitches } from '../db/tenant-apps.ts';
import type { KeySource, SecretStore } from '../secrets/secret-store.ts';
import type { AppDefinition, AppRegistry, ToolDefinition } from './app-registry.ts';
import type { HealthMonitor } from './health.ts';

/** Why a tool is not offered; one word each, shown by the catalogue, on the mission and in the system prompt. */
export const UNAVAILABLE_REASONS = ['not_installed', 'failed_to_load', 'disabled', 'no_key', 'not_connected', 'unhealthy'] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

/** A tool left out, and why; `provider` names the provider (or account) at fault. */
export type Unavailable = { reason: UnavailableReason; provider?: string };

/** What decides availability for one user, gathered once per mission (or per catalogue request). */
export type AvailabilityFacts = {
  /** The tenant's decision per app id; an app without one follows its `default_enabled`. */
  switches: ReadonlyMap<string, boolean>;
  /** Where each provider's key comes from for this user; absent: no key. */
  keys: ReadonlyMap<string, KeySource>;
  /** Providers whose account (integration) the user has connected. */
  accounts: ReadonlySet<string>;
  /** Provider ids whose health probe failed. */
  unhealthy: ReadonlySet<string>;
};

export const appEnabled = (app: Pick<AppDefinition, 'id' | 'defaultEnabled'>, switches: ReadonlyMap<string, boolean>): boolean =>
  switches.get(app.id) ?? app.defaultEnabled;

/** Whether a loaded tool can run for this user, checked in the order an admin would fix things; undefined: available. */
export function toolAvailability(
  tool: ToolDefinition,
  app: AppDefinition,
  facts: Omit<AvailabilityFacts, 'unhealthy'> & { unhealthy?: ReadonlySet<string> },
): Unavailable | undefined {
  if (!appEnabled(app, facts.switches)) return { reason: 'disabled' };
  // no_api_key providers do not use the key lookup; they may still authenticate otherwise (a proxy, an env token).
  const keyless = tool.providers.find((p) => !p.noApiKey && !facts.keys.has(p.id));
  if (keyless) return { reason: 'no_key', provider: keyless.id };
  if (tool.requiresAccount !== undefined && !facts.accounts.has(tool.requiresAccount))
    return { reason: 'not_connected', provider: tool.requiresAccount };
  const sick = tool.providers.find((p) => facts.unhealthy?.has(p.id));
  if (sick) return { reason: 'unhealthy', provider: sick.id };
  return undefined;
}

/** The services availability is read from. */
export type AvailabilityDeps = { db: Kysely<Database>; secrets: SecretStore; health: HealthMonitor; registry: AppRegistry };

/**
 * The facts for `tools` and this user: tenant switches, key sources, connected accounts, and — only for tools that
 * pass every other check — the providers' health probes, so a disabled app is never probed on its behalf.
 */
export async function gatherAvailability(
  deps: AvailabilityDeps,
  owner: Owner,
  tools: readonly ToolDefinition[],
  /** The switches and accounts when the caller read them already (prepareMission's first statement does), else read here. */
  read?: Pick<AvailabilityFacts, 'switches' | 'accounts'>,
): Promise<AvailabilityFacts> {
  const keyed = [...new Set(tools.flatMap((t) => t.providers.filter((p) => !p.noApiKey).map((p) => p.id)))];
  const [switches, keys, accounts] = await Promise.all([
    read?.switches ?? tenantAppSwitches(deps.db, owner.tenantId),
    deps.secrets.sources(owner, keyed),
    read?.accounts ?? activeProviders(deps.db, owner),
  ]);
  const facts = { switches, keys, accounts };
  const probed = new Map<string, AppProviderLike>();
  for (const tool of tools) {
    const app = deps.registry.getApp(tool.appId);
    if (!app || toolAvailability(tool, app, facts)) continue;
    for (const p of tool.providers) if (p.health) probed.set(`${p.id} ${p.health.url}`, p);
  }
  const unhealthy = new Set<string>();
  await Promise.all([...probed.values()].map(async (p) => (await deps.health.passing(p)) || unhealthy.add(p.id)));
  return { ...facts, unhealthy };
}

type AppProviderLike = ToolDefinition['providers'][number];

/** One line for the system prompt and the API: which tool, and why it cannot be used. */
export function describeUnavailable(tool: string, u: Unavailable): string {
  const why: Record<UnavailableReason, string> = {
    not_installed: 'no such tool is installed',
    failed_to_load: 'its declaration failed to load',
    disabled: 'its app is disabled for this tenant',
    no_key: `no API key for provider ${u.provider} is set for this user, tenant or server`,
    not_connected: `the user has not connected their ${u.provider} account`,
    unhealthy: `provider ${u.provider} is failing its health check`,
  };
  return `${tool}: unavailable (${u.reason}): ${why[u.reason]}`;
}
