import type { Kysely } from 'kysely';
import { getEmbeds, listMissionEmbeds } from '../db/embeds.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, EmbedRow } from '../db/schema.ts';
import { renderForModel } from '../embeds/model-form.ts';
import type { MissionResult } from '../contracts/mission.ts';

/** A mission's canvas ids and follow-ups (of its turns from `fromTurn`), from its embeds in call order; follow-ups without repeats. */
export async function gatherEmbedResults(
  db: Kysely<Database>,
  missionId: string,
  fromTurn = 0,
): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>> {
  const embeds = await listMissionEmbeds(db, missionId);
  const finished = embeds.filter((e) => e.status === 'finished' && e.turn >= fromTurn);
  return {
    canvasSpecIds: finished.flatMap((e) => e.canvas_ids),
    followUps: [...new Set(finished.flatMap((e) => e.follow_ups))],
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
