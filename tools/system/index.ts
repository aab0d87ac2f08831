import { createSkillTool, updateSkillTool } from './authoring-tools.ts';
import { saveMemoryTool, searchMemoryTool } from './memory-tools.ts';
import { readSkillAssetTool, useSkillTool } from './skill-tools.ts';
import { createSystemToolRegistry, type SystemTool } from './system-tool.ts';

/** Every system tool; each mission's catalog includes them (see activities/mission-store.ts). */
export const SYSTEM_TOOLS: SystemTool[] = [
  saveMemoryTool,
  searchMemoryTool,
  useSkillTool,
  readSkillAssetTool,
  createSkillTool,
  updateSkillTool,
];

export const createDefaultSystemTools = () => createSystemToolRegistry(SYSTEM_TOOLS);
