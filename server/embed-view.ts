import type { CanvasRow, EmbedRow } from '../db/schema.ts';

/** The public shape of an embed: one tool invocation's stored result and its status. */
export function embedView(e: EmbedRow) {
  return {
    id: e.id,
    missionId: e.mission_id,
    turn: e.turn,
    toolUseId: e.tool_use_id,
    tool: e.tool,
    status: e.status,
    ...(e.status === 'finished' ? { result: e.result } : {}),
    ...(e.error !== null ? { error: e.error } : {}),
    previews: e.previews,
    followUps: e.follow_ups,
    ...(e.instructions !== null ? { addedInstructions: e.instructions } : {}),
    canvasSpecIds: e.canvas_ids,
    warnings: e.warnings,
    createdAt: e.created_at,
    updatedAt: e.updated_at,
    finishedAt: e.finished_at,
    links: { self: `/api/v1/embeds/${e.id}`, mission: `/api/v1/missions/${e.mission_id}` },
  };
}

/** The public shape of a canvas spec. */
export function canvasView(c: CanvasRow) {
  return { id: c.id, type: c.type, title: c.title, spec: c.spec, embedId: c.embed_id, missionId: c.mission_id, createdAt: c.created_at };
}
