import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { EmbedSummary } from '../contracts/embeds.ts';
import { endEmbed, type EmbedCall, type EmbedEnd } from '../db/embeds.ts';
import type { Database } from '../db/schema.ts';
import { splitToolResult } from '../embeds/tool-result.ts';
import type { ToolCallInput } from '../contracts/mission.ts';

/** The namespace of embed ids (RFC 9562 name-based, SHA-1): a fixed random UUID of Cadenza's own. */
const EMBED_ID_NAMESPACE = Buffer.from('6f1c2a4e8b3d4f0a9c5e7d2b1a0f3e6c', 'hex');

/**
 * A tool call's embed id, chosen by the model call that returns its tool use: a UUID v5 of mission, turn and tool-use id,
 * so every attempt of the call (and the workflow, which takes it from the call's result) names the same row. Opaque and
 * URL-safe whatever characters the model server put in its tool-use ids.
 */
export function embedIdOf(missionId: string, turn: number, toolUseId: string): string {
  const hash = createHash('sha1').update(EMBED_ID_NAMESPACE).update(`${missionId}\u0000${turn}\u0000${toolUseId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The embed a tool call writes (its id the model call's, `embedIdOf`, so a retried attempt writes the same row). */
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
