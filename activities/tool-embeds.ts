import type { Kysely } from 'kysely';
import type { EmbedSummary } from '../contracts/embeds.ts';
import { endEmbed, type EmbedCall, type EmbedEnd } from '../db/embeds.ts';
import type { Database } from '../db/schema.ts';
import { splitToolResult } from '../embeds/tool-result.ts';
import type { ToolCallInput } from '../contracts/mission.ts';

/** The embed a tool call writes (its id chosen by the workflow, so a retried attempt writes the same row). */
export function embedCallOf(input: ToolCallInput): EmbedCall {
  return { id: input.embedId, missionId: input.missionId, turn: input.turn, toolUseId: input.toolUse.id, tool: input.qualifiedName };
}

/**
 * A finished call's embed end: the result taken apart (data, previews with their hashes, follow-ups, instructions,
 * canvases, warnings for what was dropped) or the error; and the counts the workflow's `embed` event carries.
 */
export function embedEndOf(
  outcome: { ok: true; result: unknown } | { ok: false; error: string },
  attempt: number,
): { end: EmbedEnd; summary: EmbedSummary } {
  if (!outcome.ok)
    return { end: { status: 'error', error: outcome.error, attempt }, summary: { previews: 0, canvases: 0, followUps: 0, warnings: 0 } };
  const parts = splitToolResult(outcome.result);
  return {
    end: {
      status: 'finished',
      attempt,
      result: parts.data,
      previews: parts.previews,
      followUps: parts.followUps,
      canvases: parts.canvases,
      warnings: parts.warnings,
      ...(parts.instructions ? { instructions: parts.instructions } : {}),
    },
    summary: {
      previews: parts.previews.length,
      canvases: parts.canvases.length,
      followUps: parts.followUps.length,
      warnings: parts.warnings.length,
    },
  };
}

/** Writes a finished call's embed on its own (its canvases upserted); returns the counts of its `embed` event. */
export async function finishEmbed(
  db: Kysely<Database>,
  call: EmbedCall,
  outcome: { ok: true; result: unknown } | { ok: false; error: string },
  attempt: number,
): Promise<EmbedSummary> {
  const { end, summary } = embedEndOf(outcome, attempt);
  await endEmbed(db, call, end);
  return summary;
}
