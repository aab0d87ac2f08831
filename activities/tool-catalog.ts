import type { AppRegistry } from '../tools/app-registry.ts';
import { SYSTEM_APP_ID, type SystemToolRegistry } from '../tools/system/system-tool.ts';
import { toModelToolName } from '../contracts/names.ts';
import type { CatalogEntry } from '../db/schema.ts';

export type { CatalogEntry };

/** Why a named tool is left out of a mission's catalog. */
export type Omitted = { tool: string; reason: 'not_installed' | 'not_connected'; provider?: string };

/**
 * The mission's tools: the skill's allowed tools united with the system tools, then gated by the user's active
 * integrations (a tool whose app requires an account the user has not connected never reaches the model).
 */
export function assembleCatalog(input: {
  registry: Pick<AppRegistry, 'getTool'>;
  systemTools: SystemToolRegistry;
  allowedTools: readonly string[];
  activeProviders: ReadonlySet<string>;
}): { catalog: CatalogEntry[]; omitted: Omitted[] } {
  const catalog: CatalogEntry[] = [];
  const omitted: Omitted[] = [];
  // Once each: a skill may name a tool twice, and providers refuse a request whose tool names repeat.
  for (const qualifiedName of new Set(input.allowedTools)) {
    // System tools are offered below to every mission, named in allowed-tools or not.
    if (input.systemTools.get(qualifiedName)) continue;
    const tool = input.registry.getTool(qualifiedName);
    if (!tool) {
      omitted.push({ tool: qualifiedName, reason: 'not_installed' });
      continue;
    }
    if (tool.requiresAccount !== undefined && !input.activeProviders.has(tool.requiresAccount)) {
      omitted.push({ tool: qualifiedName, reason: 'not_connected', provider: tool.requiresAccount });
      continue;
    }
    catalog.push({
      name: toModelToolName(qualifiedName),
      description: tool.description,
      inputSchema: tool.inputSchema,
      qualifiedName,
      timeoutS: tool.timeoutS,
      retries: tool.retries,
    });
  }
  // Every mission also has the system tools; their model-facing name is their bare name.
  for (const tool of input.systemTools.list()) {
    catalog.push({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      qualifiedName: `${SYSTEM_APP_ID}.${tool.name}`,
      timeoutS: tool.timeoutS,
      retries: 2,
    });
  }
  return { catalog, omitted };
}
