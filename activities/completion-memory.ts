import type { NewMemoryInput } from '../db/memories.ts';
import type { MissionRow } from '../db/schema.ts';
import type { MissionResult } from '../contracts/mission.ts';
import type { FeedEntry } from '../db/feed.ts';

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

/** The feed row a completed mission (`mission_end`) or a session's answered exchange (`exchange_end`) leaves. */
export function resultFeedEntry(missionId: string, result: MissionResult, exchange?: number): FeedEntry {
  return {
    missionId,
    eventKey: exchange ? `${missionId}/exchange/${exchange}` : `${missionId}/end`,
    kind: exchange ? 'exchange_end' : 'mission_end',
    outcome: 'completed',
    durationMs: result.metrics.elapsedMs,
    details: {
      ...(exchange ? { exchange } : {}),
      turns: result.metrics.turns,
      toolCalls: result.metrics.toolCalls,
      resultLength: result.text.length,
      stoppedBy: result.stoppedBy,
      costUsd: result.metrics.costUsd,
    },
  };
}
