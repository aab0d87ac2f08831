import type { AppRegistry } from './app-registry.ts';
import { SYSTEM_APP_ID } from './system/system-tool.ts';

/**
 * The entries of a skill's `allowed-tools` that name no installed tool and no system tool: an error at authoring
 * time (a tool the user has not connected is not unknown: it is only left out of that user's missions).
 */
export function unknownTools(
  registry: Pick<AppRegistry, 'getTool'>,
  allowedTools: readonly string[],
  systemToolNames: readonly string[] = [],
): string[] {
  const system = new Set(systemToolNames.map((n) => `${SYSTEM_APP_ID}.${n}`));
  return allowedTools.filter((t) => !system.has(t) && registry.getTool(t) === undefined);
}
