import type { ScriptSettings } from '../../config/config.ts';
import { createSkillTool, updateSkillTool } from './authoring-tools.ts';
import { createScriptTool } from './create-script.ts';
import { saveMemoryTool, searchMemoryTool } from './memory-tools.ts';
import { createRunSkillScriptTool, RUN_SKILL_SCRIPT } from './run-skill-script.ts';
import { readSkillAssetTool, useSkillTool } from './skill-tools.ts';
import { createSystemToolRegistry, type SystemTool } from './system-tool.ts';

/** The system tools that need no settings; a script may call back those on its allowlist. */
const BASE_TOOLS: SystemTool[] = [saveMemoryTool, searchMemoryTool, useSkillTool, readSkillAssetTool, createSkillTool, updateSkillTool];

/** The names of every system tool; each mission's catalog includes them (see activities/mission-store.ts). */
export const SYSTEM_TOOL_NAMES: readonly string[] = [...BASE_TOOLS.map((t) => t.name), RUN_SKILL_SCRIPT, createScriptTool.name];

/** Every system tool of a process, built once from its settings (scripts need their sandbox's). */
export function createSystemTools(scripts: ScriptSettings) {
  const unknown = scripts.toolAllowlist.filter((name) => !BASE_TOOLS.some((t) => t.name === name));
  if (unknown.length > 0)
    throw new Error(
      `SCRIPT_TOOL_ALLOWLIST: ${unknown.join(', ')} is not a system tool a script may call (${BASE_TOOLS.map((t) => t.name).join(', ')})`,
    );
  return createSystemToolRegistry([...BASE_TOOLS, createRunSkillScriptTool(scripts, BASE_TOOLS), createScriptTool]);
}
