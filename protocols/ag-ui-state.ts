import { EventType, type BaseEvent } from '@ag-ui/core';
import type { EmbedSummary } from '../contracts/embeds.ts';
import type { MissionEvent } from '../contracts/events.ts';
import type { EmbedRow } from '../db/schema.ts';

/** One embed as the run's state shows it: the call it came from, its status and, once ended, what it holds. */
type EmbedState = { toolUseId: string; tool: string; status: string; summary?: EmbedSummary };

/**
 * The thread's embeds (its tool calls' results, `processing` → `finished` | `error` | `cancelled`) are the run's state,
 * as `{ embeds: { <embedId>: EmbedState } }`: a STATE_SNAPSHOT of those stored when the run starts (a continued or
 * resumed thread has some), then a STATE_DELTA (JSON Patch) per `embed` event. Each delta `add`s the whole entry, which
 * replaces an earlier one: an event replayed after a resume changes nothing. The content stays at `GET /embeds/:id`.
 */
export function stateSnapshot(rows: readonly EmbedRow[], clientState: unknown): BaseEvent {
  const embeds = Object.fromEntries(rows.map((r) => [r.id, rowState(r)]));
  // The client's own state keys stay as it sent them; `embeds` is the agent's.
  const own = clientState && typeof clientState === 'object' && !Array.isArray(clientState) ? clientState : {};
  return { type: EventType.STATE_SNAPSHOT, snapshot: { ...own, embeds } } as BaseEvent;
}

export function stateDelta(e: Extract<MissionEvent, { type: 'embed' }>): BaseEvent {
  const value: EmbedState = { toolUseId: e.toolUseId, tool: e.tool, status: e.status, ...(e.summary ? { summary: e.summary } : {}) };
  return { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: `/embeds/${e.embedId}`, value }] } as BaseEvent;
}

function rowState(r: EmbedRow): EmbedState {
  const ended = r.status !== 'processing';
  const summary = {
    previews: r.previews.length,
    canvases: r.canvas_ids.length,
    followUps: r.follow_ups.length,
    warnings: r.warnings.length,
  };
  return { toolUseId: r.tool_use_id, tool: r.tool, status: r.status, ...(ended ? { summary } : {}) };
}
