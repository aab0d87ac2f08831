import { createSystemToolRegistry, type SystemTool } from './system-tool.ts';

/** Every system tool; each mission's catalog includes them (see activities/mission-store.ts). */
export const SYSTEM_TOOLS: SystemTool[] = [];

export const createDefaultSystemTools = () => createSystemToolRegistry(SYSTEM_TOOLS);
