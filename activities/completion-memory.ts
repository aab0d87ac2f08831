import type { NewMemoryInput } from '../db/memories.ts';
import type { MissionRow } from '../db/schema.ts';
import type { MissionResult } from '../contracts/mission.ts';

const MAX_RESULT_CHARS = 1_500;

/** The memory a completed mission leaves: its result, tagged with the skill and the objective, keyed by the mission. */
export function completionMemory(mission: MissionRow, result: MissionResult, exchange?: number): NewMemoryInput {
  const text = result.text.trim();
  const body = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS - 1)}…` : text || '(no text)';
  return {
    owner: { tenantId: mission.tenant_id, userId: mission.user_id },
    workspaceCode: mission.workspace_code,
    content: `Result of skill ${mission.skill_name}${exchange ? ` (exchange ${exchange})` : ''} for "${mission.objective.slice(0, 300)}": ${body}`,
    tags: [`skill:${mission.skill_name}`, `objective:${mission.objective.slice(0, 200)}`],
    source: 'mission',
    missionId: mission.id,
    // A session's exchanges each leave one; its end keys the last exchange's, so it writes nothing twice.
    sourceKey: exchange ? `mission/${mission.id}/exchange/${exchange}` : `mission/${mission.id}/result`,
  };
}
