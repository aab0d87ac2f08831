import type { Kysely } from 'kysely';
import { getEmbeds } from '../db/embeds.ts';
import { readMissionAndEmbedResults } from '../db/mission-completion.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, EmbedRow, MissionRow } from '../db/schema.ts';
import { renderForModel } from '../embeds/model-form.ts';
import type { MissionResult } from '../contracts/mission.ts';

/**
 * A mission's row with its canvas ids and follow-ups (of its turns from `fromTurn`), from its finished embeds in call
 * order, in one round trip; follow-ups without repeats.
 */
export async function readMissionResults(
  db: Kysely<Database>,
  missionId: string,
  fromTurn = 0,
): Promise<{ mission: MissionRow; gathered: Pick<MissionResult, 'canvasSpecIds' | 'followUps'> }> {
  const { mission, embeds } = await readMissionAndEmbedResults(db, missionId, fromTurn);
  return {
    mission,
    gathered: { canvasSpecIds: embeds.flatMap((e) => e.canvas_ids), followUps: [...new Set(embeds.flatMap((e) => e.follow_ups))] },
  };
}

/** Each referenced embed's content for the mission's context: its tool, status and data in the model's form (TOON or JSON). */
export async function renderEmbedRefs(db: Kysely<Database>, owner: Owner, ids: string[]): Promise<string | undefined> {
  const embeds = await getEmbeds(db, owner, ids);
  if (embeds.length === 0) return undefined;
  return embeds.map(describe).join('\n\n');
}

function describe(e: EmbedRow): string {
  const head = `Embed ${e.id} (tool ${e.tool}, ${e.status}):`;
  if (e.status === 'error') return `${head} error: ${e.error ?? 'the tool failed'}`;
  if (e.status !== 'finished') return `${head} no result.`;
  const previews = e.previews.map(({ hash: _hash, ...p }) => p);
  const isRecord = typeof e.result === 'object' && e.result !== null && !Array.isArray(e.result);
  const data = previews.length === 0 ? e.result : isRecord ? { ...(e.result as object), previews } : { data: e.result, previews };
  const form = renderForModel(data);
  return `${head}\n${form.text}${e.instructions ? `\n[instructions: ${e.instructions}]` : ''}`;
}
