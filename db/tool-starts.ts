import { sql, type Expression, type Kysely, type QueryCreator, type SqlBool } from 'kysely';
import type { EmbedCall } from './embeds.ts';
import type { Owner } from './owner.ts';
import type { Database } from './schema.ts';

/**
 * The tool calls a model call's reply starts, written by the reply's statement: `calls` get their feed start row and
 * their embed as `processing` (each once: a retried attempt leaves them). `toolUseIds` are all the reply's tool uses,
 * started or not.
 */
export type ReplyToolStarts = { owner: Owner; turn: number; calls: EmbedCall[]; toolUseIds: string[] };

/** `current`: the reply is not superseded by a later attempt's (each part writes only then). */
type Part = { missionId: string; starts: ReplyToolStarts; current: Expression<SqlBool> };

/**
 * The `processing` embeds no call will end: the mission's of earlier turns (the workflow settles a turn's calls before
 * it calls the model again, so none runs: a reply whose calls were not run because the budget forced the final call)
 * and this turn's tool uses the reply does not return (an earlier attempt's, or the call an interrupt cancelled after
 * its reply was stored). Removed, never announced: no `tool_start` event named them.
 */
export function staleEmbedsDelete(qc: QueryCreator<Database>, { missionId, starts, current }: Part) {
  return qc
    .deleteFrom('embeds')
    .where('mission_id', '=', missionId)
    .where('status', '=', 'processing')
    .where((eb) =>
      eb.or([
        eb('turn', '<', starts.turn),
        eb.and([eb('turn', '=', starts.turn), ...(starts.toolUseIds.length > 0 ? [eb('tool_use_id', 'not in', starts.toolUseIds)] : [])]),
      ]),
    )
    .where(current)
    .returning(['turn', 'tool_use_id']);
}

/** A statement's CTEs with the `stale_embeds` that `staleFeedStartsDelete` reads. */
export type StaleEmbedsSource = QueryCreator<Database & { stale_embeds: { turn: number; tool_use_id: string } }>;

/** The feed start rows of the embeds the statement's `stale_embeds` CTE removed (the event key of `recordToolFeed`). */
export function staleFeedStartsDelete(qc: StaleEmbedsSource, missionId: string) {
  return qc
    .deleteFrom('feed')
    .where('event_key', 'in', (eb) =>
      eb
        .selectFrom('stale_embeds')
        .select(sql<string>`${`${missionId}/tool/`}::text || turn::text || '/' || tool_use_id || '/start'`.as('key')),
    );
}

/** The started calls as rows, in the model's order (`ordinality`). */
const startedRows = (calls: EmbedCall[]) =>
  sql<{ value: unknown; ordinality: number }>`jsonb_array_elements(${JSON.stringify(
    calls.map((c) => ({ id: c.id, tool_use_id: c.toolUseId, tool: c.tool })),
  )}::jsonb) with ordinality`.as('started');

/** Each started call's feed start row, once per key (the event key of `recordToolFeed`). */
export function feedStartsInsert(qc: QueryCreator<Database>, { missionId, starts, current }: Part) {
  return qc
    .insertInto('feed')
    .columns(['tenant_id', 'user_id', 'mission_id', 'event_key', 'kind', 'tool', 'tool_use_id'])
    .expression((eb) =>
      eb
        .selectFrom(startedRows(starts.calls))
        .select([
          sql.val(starts.owner.tenantId).as('tenant_id'),
          sql.val(starts.owner.userId).as('user_id'),
          sql.val(missionId).as('mission_id'),
          sql<string>`${`${missionId}/tool/${starts.turn}/`}::text || (started.value->>'tool_use_id') || '/start'`.as('event_key'),
          sql.lit('tool_start').as('kind'),
          sql<string>`started.value->>'tool'`.as('tool'),
          sql<string>`started.value->>'tool_use_id'`.as('tool_use_id'),
        ])
        .where(current)
        .orderBy(sql`started.ordinality`),
    )
    .onConflict((oc) => oc.column('event_key').doNothing());
}

/** Each started call's embed as `processing`, once (a retried attempt finds it and leaves it). */
export function embedStartsInsert(qc: QueryCreator<Database>, { missionId, starts, current }: Part) {
  return qc
    .insertInto('embeds')
    .columns(['id', 'mission_id', 'tenant_id', 'user_id', 'turn', 'tool_use_id', 'tool', 'status', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom(startedRows(starts.calls))
        .select([
          sql<string>`started.value->>'id'`.as('id'),
          sql.val(missionId).as('mission_id'),
          sql.val(starts.owner.tenantId).as('tenant_id'),
          sql.val(starts.owner.userId).as('user_id'),
          sql<number>`${starts.turn}::integer`.as('turn'),
          sql<string>`started.value->>'tool_use_id'`.as('tool_use_id'),
          sql<string>`started.value->>'tool'`.as('tool'),
          sql.lit('processing').as('status'),
          // One statement's now() for all of them: a microsecond apart, so a turn's embeds list in the model's order.
          sql<Date>`now() + started.ordinality * interval '1 microsecond'`.as('created_at'),
        ])
        .where(current),
    )
    .onConflict((oc) => oc.doNothing());
}

/**
 * A mission ending mid-turn (cancelled or failed): the starts no call will end are removed. The workflow has ended
 * every call it ran first, so what is still `processing` was written with a reply it never acted on (the mission
 * cancelled while the model call stored it, or during a budget pause).
 */
export async function removeUnendedStarts(db: Kysely<Database>, missionId: string): Promise<void> {
  await staleFeedStartsDelete(
    db.with('stale_embeds', (qc) =>
      qc.deleteFrom('embeds').where('mission_id', '=', missionId).where('status', '=', 'processing').returning(['turn', 'tool_use_id']),
    ),
    missionId,
  ).execute();
}
