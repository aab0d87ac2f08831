import { setMemoryEmbeddingByKey, type NewMemoryInput } from '../db/memories.ts';
import type { MissionRow } from '../db/schema.ts';
import { embedForStorage, type RetrievalDeps } from '../memory/retrieve.ts';
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

/**
 * Gives a completion memory, stored without a vector, its vector once the result is out: the encoder (a local model
 * or an endpoint) is off the result's path. Not awaited; a worker that dies first leaves the memory to the
 * re-embedding pass at the next start (memory/reembed.ts), which redoes every memory stored without one.
 */
export function embedAfterwards(deps: Omit<RetrievalDeps, 'vectors' | 'tuning'>, memory: NewMemoryInput): void {
  if (!deps.embeddings || !memory.sourceKey) return;
  const sourceKey = memory.sourceKey;
  void embedForStorage(deps, memory.content)
    .then((embedding) => embedding && setMemoryEmbeddingByKey(deps.db, sourceKey, embedding))
    .catch((err: unknown) => deps.logger?.warn("could not store a memory's vector; the next start redoes it", { err: String(err) }));
}
