import { ApplicationFailure } from '@temporalio/activity';
import { getMission, updateMission } from '../db/missions.ts';
import { getSkillVersion } from '../db/skills.ts';
import { putMessage } from '../db/transcript.ts';
import { toModelToolName } from '../tools/tool-names.ts';
import type { MissionPlan, MissionResult, MissionStatus, Tier } from '../workflows/definitions.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import type { ResolvedActivityDeps } from './index.ts';
import type { ToolSpec } from './model/model-types.ts';
import { buildSystemPrompt, buildObjectiveMessage } from './prompt.ts';

/** A catalog entry as stored on the mission row (frozen for the run). */
export type CatalogEntry = ToolSpec & { qualifiedName: string; timeoutS: number; retries: number };

/** Activities that read and write the mission's own rows: prepare, complete, fail. */
export function createMissionStoreActivities({ db, registry, systemTools, logger }: ResolvedActivityDeps) {
  return {
    /** Loads the skill version, freezes the tool catalog and the system prompt, writes the opening message. */
    async prepareMission({ missionId }: { missionId: string }): Promise<MissionPlan> {
      const mission = await getMission(db, missionId);
      const version = await getSkillVersion(db, mission.skill_id, mission.skill_version);
      if (!version) throw ApplicationFailure.nonRetryable(`skill version ${mission.skill_version} not found`, 'SkillMissing');
      const fm = version.frontmatter as { 'allowed-tools'?: string | string[]; model?: Tier };
      const allowed = typeof fm['allowed-tools'] === 'string' ? fm['allowed-tools'].split(/\s+/).filter(Boolean) : (fm['allowed-tools'] ?? []);
      const catalog: CatalogEntry[] = [];
      for (const qualifiedName of allowed) {
        const tool = registry.getTool(qualifiedName);
        if (!tool) {
          logger.warn('skill names a tool that is not installed; leaving it out', { missionId, tool: qualifiedName });
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
      for (const tool of systemTools.list()) {
        catalog.push({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
          qualifiedName: `${SYSTEM_APP_ID}.${tool.name}`,
          timeoutS: tool.timeoutS,
          retries: 2,
        });
      }
      const systemPrompt = buildSystemPrompt({ skillName: mission.skill_name, body: version.body, tools: catalog });
      await updateMission(db, missionId, { catalog: JSON.stringify(catalog), system_prompt: systemPrompt });
      await putMessage(db, missionId, 0, buildObjectiveMessage(mission));
      return {
        tier: fm.model ?? 'allegro',
        maxTurns: mission.max_turns,
        tools: catalog.map((c) => ({ modelName: c.name, qualifiedName: c.qualifiedName, timeoutS: c.timeoutS, retries: c.retries })),
      };
    },

    async completeMission({ missionId, result }: { missionId: string; result: MissionResult }): Promise<void> {
      await updateMission(db, missionId, { status: 'completed', result: JSON.stringify(result), finished_at: new Date() });
    },

    async failMission(input: { missionId: string; status: Exclude<MissionStatus, 'running' | 'completed'>; error: { phase: string; message: string } }) {
      await updateMission(db, input.missionId, { status: input.status, error: JSON.stringify(input.error), finished_at: new Date() });
    },
  };
}
