import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { EmbedStatus } from '../contracts/embeds.ts';
import { fromMission, whereOwner, type Owner } from './owner.ts';
import type { CanvasRow, Database, EmbedRow, StoredPreview } from './schema.ts';

/** One tool invocation, as the embed names it. */
export type EmbedCall = { id: string; missionId: string; turn: number; toolUseId: string; tool: string };

/** A finished invocation's parts, as stored (canvases checked and given their ids here). */
export type EmbedEnd = {
  status: Exclude<EmbedStatus, 'processing'>;
  attempt?: number;
  result?: unknown;
  error?: string;
  previews?: StoredPreview[];
  followUps?: string[];
  instructions?: string;
  canvases?: Array<{ type: string; title: string; spec: unknown }>;
  warnings?: string[];
};

/**
 * Creates the invocation's embed as `processing`, once: the owner is the mission's, read in the same statement. A
 * retried attempt finds the row there and leaves it (its end is what changes).
 */
export async function startEmbed(db: Kysely<Database>, call: EmbedCall): Promise<void> {
  await db
    .insertInto('embeds')
    .columns(['tenant_id', 'user_id', 'mission_id', 'id', 'turn', 'tool_use_id', 'tool', 'status'])
    .expression((eb) =>
      fromMission(eb, call.missionId, [
        sql.val(call.id).as('id'),
        sql.val(call.turn).as('turn'),
        sql.val(call.toolUseId).as('tool_use_id'),
        sql.val(call.tool).as('tool'),
        sql.val('processing').as('status'),
      ]),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Writes the invocation's end: every write overwrites the last (a retried attempt's end is the one that stands), and
 * the canvases are upserted by their place in the result, so a canvas keeps its id across attempts. Returns the ids.
 */
export async function endEmbed(db: Kysely<Database>, call: EmbedCall, end: EmbedEnd): Promise<{ canvasIds: string[] }> {
  return db.transaction().execute(async (trx) => {
    await startEmbed(trx, call);
    const embed = await trx
      .selectFrom('embeds')
      .select(['mission_id', 'tenant_id', 'user_id'])
      .where('id', '=', call.id)
      .executeTakeFirstOrThrow();
    const canvasIds: string[] = [];
    for (const [position, c] of (end.canvases ?? []).entries()) {
      const row = await trx
        .insertInto('canvases')
        .values({ id: randomUUID(), embed_id: call.id, ...embed, position, type: c.type, title: c.title, spec: JSON.stringify(c.spec) })
        .onConflict((oc) =>
          oc.columns(['embed_id', 'position']).doUpdateSet({ type: c.type, title: c.title, spec: JSON.stringify(c.spec) }),
        )
        .returning('id')
        .executeTakeFirstOrThrow();
      canvasIds.push(row.id);
    }
    await trx.deleteFrom('canvases').where('embed_id', '=', call.id).where('position', '>=', canvasIds.length).execute();
    await trx.updateTable('embeds').set(endedEmbedColumns(end, canvasIds)).where('id', '=', call.id).execute();
    return { canvasIds };
  });
}

/** The columns an embed's end writes (`endEmbed`, and `endToolCall` for an end without canvases). */
export function endedEmbedColumns(end: EmbedEnd, canvasIds: string[]) {
  const now = new Date();
  return {
    status: end.status,
    result: end.result === undefined ? null : JSON.stringify(end.result),
    error: end.error ?? null,
    previews: JSON.stringify(end.previews ?? []),
    follow_ups: JSON.stringify(end.followUps ?? []),
    instructions: end.instructions ?? null,
    canvas_ids: JSON.stringify(canvasIds),
    warnings: JSON.stringify(end.warnings ?? []),
    ...(end.attempt !== undefined ? { attempt: end.attempt } : {}),
    updated_at: now,
    finished_at: now,
  };
}

/** The owner's embed with this id; someone else's is indistinguishable from a missing one. */
export async function getEmbed(db: Kysely<Database>, owner: Owner, id: string): Promise<EmbedRow | undefined> {
  return db.selectFrom('embeds').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}

/** The owner's embeds among `ids`, in the order of `ids` (missing and foreign ones left out). */
export async function getEmbeds(db: Kysely<Database>, owner: Owner, ids: string[]): Promise<EmbedRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('embeds').selectAll().where('id', 'in', ids).where(whereOwner(owner)).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A mission's embeds in the order of its tool calls (by turn, then as they started). */
export async function listMissionEmbeds(db: Kysely<Database>, missionId: string): Promise<EmbedRow[]> {
  return db
    .selectFrom('embeds')
    .selectAll()
    .where('mission_id', '=', missionId)
    .orderBy('turn')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The id of the mission's embed with this id, or whose tool-use id this is (the latest such call). */
export async function findMissionEmbed(db: Kysely<Database>, missionId: string, idOrToolUseId: string): Promise<EmbedRow | undefined> {
  return db
    .selectFrom('embeds')
    .selectAll()
    .where('mission_id', '=', missionId)
    .where((eb) => eb.or([eb('id', '=', idOrToolUseId), eb('tool_use_id', '=', idOrToolUseId)]))
    .orderBy('turn', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The owner's canvas with this id. */
export async function getCanvas(db: Kysely<Database>, owner: Owner, id: string): Promise<CanvasRow | undefined> {
  return db.selectFrom('canvases').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}
