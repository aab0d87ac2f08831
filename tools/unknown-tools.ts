import { appWildcard } from '../contracts/names.ts';
import type { AppRegistry } from './app-registry.ts';
import { SYSTEM_APP_ID } from './system/system-tool.ts';

/**
 * The entries of a skill's `allowed-tools` that name no installed tool, no installed app (`<app-id>.*`) and no system
 * tool: an error at authoring time (a tool the user cannot use yet is not unknown: it is only left out of their missions).
 */
export function unknownTools(
  registry: Pick<AppRegistry, 'getTool' | 'getApp'>,
  allowedTools: readonly string[],
  systemToolNames: readonly string[] = [],
): string[] {
  const system = new Set(systemToolNames.map((n) => `${SYSTEM_APP_ID}.${n}`));
  return allowedTools.filter((t) => {
    const app = appWildcard(t);
    if (app !== undefined) return registry.getApp(app) === undefined;
    return !system.has(t) && registry.getTool(t) === undefined;
  });
}
