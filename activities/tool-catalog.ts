import type { Owner } from '../db/owner.ts';
import { appWildcard, toModelToolName } from '../contracts/names.ts';
import type { CatalogEntry } from '../db/schema.ts';
import type { AppRegistry, ToolDefinition } from '../tools/app-registry.ts';
import {
  gatherAvailability,
  toolAvailability,
  type AvailabilityDeps,
  type AvailabilityFacts,
  type Unavailable,
} from '../tools/availability.ts';
import { SYSTEM_APP_ID, type SystemToolRegistry } from '../tools/system/system-tool.ts';
import { rankTools, type RankedTool } from '../tools/tool-ranking.ts';

export type { CatalogEntry };

/** A tool the skill asked for (by name or through `<app-id>.*`) that the mission is not offered, and why. */
export type Omitted = { tool: string } & Unavailable;

/** When the catalog was over MAX_TOOLS_PER_MISSION: how many tools competed, and which were kept and dropped. */
export type Preselection = { limit: number; candidates: number; kept: RankedTool[]; dropped: RankedTool[] };

/**
 * The mission's tools: the skill's allowed tools (`<app-id>.*` naming a whole app) that are available to this user,
 * united with the system tools. Pure: the availability facts are gathered beforehand.
 */
export function assembleCatalog(input: {
  registry: Pick<AppRegistry, 'getTool' | 'getApp' | 'loadError'>;
  systemTools: SystemToolRegistry;
  allowedTools: readonly string[];
  facts: AvailabilityFacts;
}): { tools: ToolDefinition[]; omitted: Omitted[] } {
  const tools: ToolDefinition[] = [];
  const omitted: Omitted[] = [];
  const seen = new Set<string>();
  // Once each: a skill may name a tool twice (or by name and by app), and providers refuse repeated tool names.
  for (const entry of input.allowedTools) {
    // System tools are offered below to every mission, named in allowed-tools or not.
    if (input.systemTools.get(entry)) continue;
    const wildcard = appWildcard(entry);
    const app = input.registry.getApp(wildcard ?? entry.slice(0, entry.indexOf('.')));
    const named = wildcard ? (app?.tools ?? []) : [input.registry.getTool(entry)].filter((t) => t !== undefined);
    if (named.length === 0) {
      // The load error itself is for admins (GET /apps with the admin key); the mission records only the reason.
      omitted.push({ tool: entry, reason: input.registry.loadError(entry) !== undefined ? 'failed_to_load' : 'not_installed' });
      continue;
    }
    for (const tool of named) {
      if (seen.has(tool.qualifiedName)) continue;
      seen.add(tool.qualifiedName);
      const unavailable = toolAvailability(tool, app!, input.facts);
      if (unavailable) omitted.push({ tool: tool.qualifiedName, ...unavailable });
      else tools.push(tool);
    }
  }
  return { tools, omitted };
}

/**
 * The catalog entries of app tools and of every system tool (their model-facing name is their bare name). A call needs
 * approval when its tool requires it or the skill's `approval` list names it (or its app as `<app-id>.*`): a skill can
 * add approvals, never remove one.
 */
export function toCatalogEntries(
  tools: readonly ToolDefinition[],
  systemTools: SystemToolRegistry,
  skillApproval: readonly string[] = [],
): CatalogEntry[] {
  const named = (qualifiedName: string) =>
    skillApproval.some((entry) => entry === qualifiedName || appWildcard(entry) === qualifiedName.slice(0, qualifiedName.indexOf('.')));
  const approval = (required: boolean, qualifiedName: string) => (required || named(qualifiedName) ? { approval: true } : {});
  return [
    ...tools.map((tool) => ({
      name: toModelToolName(tool.qualifiedName),
      description: tool.description,
      inputSchema: tool.inputSchema,
      qualifiedName: tool.qualifiedName,
      timeoutS: tool.timeoutS,
      retries: tool.retries,
      ...approval(tool.approval, tool.qualifiedName),
      ...(tool.client ? { client: true } : {}),
    })),
    ...systemTools.list().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      qualifiedName: `${SYSTEM_APP_ID}.${tool.name}`,
      timeoutS: tool.timeoutS,
      retries: 2,
      ...approval(false, `${SYSTEM_APP_ID}.${tool.name}`),
    })),
  ];
}

/** What prepareMission freezes: the catalog, what was left out and why, and the preselection when there was one. */
export type ToolSelection = { catalog: CatalogEntry[]; omitted: Omitted[]; preselection?: Preselection };

/**
 * Gathers the user's availability facts, assembles the catalog, and — when more app tools remain than
 * `maxTools` — keeps the ones most relevant to the objective (system tools are always offered).
 */
export async function selectMissionTools(
  deps: AvailabilityDeps & { systemTools: SystemToolRegistry; maxTools: number },
  input: {
    owner: Owner;
    allowedTools: readonly string[];
    objective: string;
    approval?: readonly string[];
    /** The tenant's switches and the owner's accounts, already read. */
    read?: Pick<AvailabilityFacts, 'switches' | 'accounts'>;
  },
): Promise<ToolSelection> {
  const requested = input.allowedTools.flatMap((entry) => {
    const appId = appWildcard(entry);
    if (appId) return deps.registry.getApp(appId)?.tools ?? [];
    const tool = deps.registry.getTool(entry);
    return tool ? [tool] : [];
  });
  const facts = await gatherAvailability(deps, input.owner, requested, input.read);
  const { tools, omitted } = assembleCatalog({ ...deps, allowedTools: input.allowedTools, facts });
  if (tools.length <= deps.maxTools) return { catalog: toCatalogEntries(tools, deps.systemTools, input.approval), omitted };
  const ranked = await rankTools(
    deps.db,
    input.objective,
    tools.map((tool) => ({ tool, app: deps.registry.getApp(tool.appId) })),
  );
  const kept = ranked.slice(0, deps.maxTools);
  const keep = new Set(kept.map((r) => r.qualifiedName));
  return {
    // The skill's order, not the ranking's: the prompt and the tool list read as the skill wrote them.
    catalog: toCatalogEntries(
      tools.filter((t) => keep.has(t.qualifiedName)),
      deps.systemTools,
      input.approval,
    ),
    omitted,
    preselection: { limit: deps.maxTools, candidates: tools.length, kept, dropped: ranked.slice(deps.maxTools) },
  };
}
