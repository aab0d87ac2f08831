import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { findRetryOf } from '../db/mission-retry.ts';
import { listChildren } from '../db/mission-tree.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { missionWorkflowId, stateQuery, type MissionState } from '../contracts/mission.ts';
import { listToolCallsWithEmbeds } from '../db/tool-call-records.ts';
import { listMissionFiles } from '../db/mission-files.ts';
import { fileRef } from '../embeds/tool-files.ts';

/** The public shape of a mission, as README's API reference describes it. */
export function missionSummary(row: MissionRow) {
  return {
    id: row.id,
    status: row.status,
    skill: { name: row.skill_name, version: row.skill_version },
    objective: row.objective,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    ...(row.limits ? { limits: row.limits } : {}),
    ...(row.retry_of ? { retryOf: row.retry_of } : {}),
    ...(row.session ? { session: true } : {}),
    ...(row.budget_pause_s !== null ? { budgetPolicy: 'pause' as const } : {}),
    ...(row.schedule_id ? { scheduleId: row.schedule_id } : {}),
    ...(row.parent_id ? { parentId: row.parent_id } : {}),
    links: { self: `/api/v1/missions/${row.id}`, events: `/api/v1/missions/${row.id}/events` },
  };
}

/**
 * The live state from the workflow's query when a worker can answer it, else what Postgres holds
 * (status, result, error and the tool calls that finished).
 */
export async function missionDetail(deps: { db: Kysely<Database>; temporal: Client }, row: MissionRow) {
  // A mission still starting has no workflow to ask (or Temporal could not say so a moment ago).
  const live = row.status === 'starting' ? undefined : await queryState(deps.temporal, row.id);
  const [retriedBy, children, files] = await Promise.all([
    findRetryOf(deps.db, row.id),
    listChildren(deps.db, row.id),
    listMissionFiles(deps.db, row.id),
  ]);
  // The files its tools and scripts returned go with the result (stored apart, never in workflow history).
  const withFiles = <R extends object>(result: R) => ({ ...result, files: files.map(fileRef) });
  const base = {
    ...missionSummary(row),
    workflowId: missionWorkflowId(row.id),
    provenance: row.provenance ?? [],
    ...(retriedBy ? { retriedBy } : {}),
    ...(children.length
      ? {
          children: children.map((c) => ({
            id: c.id,
            status: c.status,
            skill: { name: c.skill_name, version: c.skill_version },
            createdAt: c.created_at,
            finishedAt: c.finished_at,
          })),
        }
      : {}),
    ...toolSelection(row),
    ...(row.context_memories ? { contextMemories: row.context_memories } : {}),
    ...(row.output_schema ? { outputSchema: row.output_schema } : {}),
  };
  if (live) {
    // A session's later run holds its own exchanges; those of the runs before it are in the row, recorded first.
    const exchanges = live.exchangesBefore
      ? [...(row.exchanges ?? []).slice(0, live.exchangesBefore), ...(live.exchanges ?? [])]
      : live.exchanges;
    const result = live.result ?? (live.exchangesBefore ? exchanges?.at(-1) : undefined);
    // The tool calls of the runs before it ended there, so they are recorded (each call's embed id is its own).
    const own = new Set(live.tools.map((t) => t.embedId));
    const earlier = live.exchangesBefore ? (await recordedTools(deps.db, row.id)).filter((t) => !own.has(t.embedId ?? '')) : [];
    return {
      ...base,
      status: live.status,
      turn: live.turn,
      tools: [...earlier, ...live.tools],
      ...(result ? { result: withFiles(result) } : {}),
      ...(exchanges ? { exchanges } : {}),
      ...(live.error ? { error: live.error } : {}),
    };
  }
  return {
    ...base,
    turn: row.result?.metrics.turns ?? 0,
    tools: await recordedTools(deps.db, row.id),
    ...(row.result ? { result: withFiles(row.result) } : {}),
    ...(row.exchanges ? { exchanges: row.exchanges } : {}),
    ...(row.error ? { error: row.error } : {}),
  };
}

/** The mission's tool calls that ended, each with its embed as the live state names it (older calls have none). */
async function recordedTools(db: Kysely<Database>, missionId: string) {
  const tools = await listToolCallsWithEmbeds(db, missionId);
  return tools.map((t) => ({
    toolUseId: t.tool_use_id,
    name: t.tool,
    status: t.status,
    durationMs: t.duration_ms,
    ...(t.embed_id ? { embedId: t.embed_id } : {}),
  }));
}

/** What the catalog left out and why (`unavailableTools`), and the preselection when there was one; set at prepare. */
function toolSelection(row: MissionRow) {
  const selection = row.tool_selection as { unavailable?: unknown[]; preselection?: unknown } | null;
  if (!selection) return {};
  return { unavailableTools: selection.unavailable ?? [], ...(selection.preselection ? { preselection: selection.preselection } : {}) };
}

export async function queryState(temporal: Client, missionId: string): Promise<MissionState | undefined> {
  try {
    return await temporal.withDeadline(Date.now() + 3_000, () =>
      temporal.workflow.getHandle(missionWorkflowId(missionId)).query(stateQuery),
    );
  } catch {
    return undefined;
  }
}
