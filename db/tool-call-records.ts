import type { Kysely, QueryCreator } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { endedEmbedColumns, type EmbedCall, type EmbedEnd } from './embeds.ts';
import { feedEventInsert, toolFeedEntry, type ToolFeedEnd } from './feed.ts';
import type { Owner } from './owner.ts';
import type { Database } from './schema.ts';
import { notFromEarlierAttempt } from './transcript.ts';

/** One tool call as its records name it. */
export type ToolCallKey = { missionId: string; turn: number; toolUseId: string; tool: string };

/** A stored tool output: what a retried attempt finds when the tool already answered. */
export type StoredToolCall = { status: string; output: unknown; duration_ms: number; attempt: number };

/**
 * A tool call's start in one statement (one round trip): the feed's start row and the embed as `processing` (each
 * written once: a retried attempt leaves them), the output an earlier attempt stored, and the tenant's app switches
 * (read at call time: an admin may disable an app during a mission).
 */
export async function startToolCall(
  db: Kysely<Database>,
  owner: Owner,
  call: ToolCallKey,
  embed: EmbedCall,
): Promise<{ stored: StoredToolCall | undefined; switches: Map<string, boolean> }> {
  const row = await db
    .with('feed_start', (qc) => feedStartRow(qc, owner, call).onConflict((oc) => oc.column('event_key').doNothing()))
    .with('embed_start', (qc) =>
      qc
        .insertInto('embeds')
        .values({ ...embedOwner(owner, embed), status: 'processing' })
        .onConflict((oc) => oc.doNothing()),
    )
    .selectNoFrom((eb) => [
      jsonObjectFrom(
        eb
          .selectFrom('tool_calls')
          .select(['status', 'output', 'duration_ms', 'attempt'])
          .where('mission_id', '=', call.missionId)
          .where('turn', '=', call.turn)
          .where('tool_use_id', '=', call.toolUseId),
      ).as('stored'),
      jsonArrayFrom(eb.selectFrom('tenant_apps').select(['app_id', 'enabled']).where('tenant_id', '=', owner.tenantId)).as('switches'),
    ])
    .executeTakeFirstOrThrow();
  return {
    stored: (row.stored as StoredToolCall | null) ?? undefined,
    switches: new Map(row.switches.map((s) => [s.app_id, s.enabled])),
  };
}

/** A finished attempt's output (`json`: the output as JSON text), its embed's end and its feed row. */
export type ToolCallEnd = {
  output: { status: 'completed' | 'error'; json: string; durationMs: number; attempt: number; attemptScheduledMs: number };
  embed: { call: EmbedCall; end: EmbedEnd };
  feed: ToolFeedEnd;
};

/**
 * Writes a finished attempt's output, its embed's end and the feed's end row in one statement (one round trip, all or
 * none). The output overwrites an earlier attempt's (never a later one's: `notFromEarlierAttempt`) and the embed's end overwrites the last (its canvases removed:
 * this form is for an end without canvases; `endEmbed` upserts canvases); the feed row is written once (its key).
 */
export async function endToolCall(db: Kysely<Database>, owner: Owner, call: ToolCallKey, end: ToolCallEnd): Promise<void> {
  const output = {
    mission_id: call.missionId,
    turn: call.turn,
    tool_use_id: call.toolUseId,
    tool: call.tool,
    status: end.output.status,
    output: end.output.json,
    duration_ms: end.output.durationMs,
    attempt: end.output.attempt,
    attempt_scheduled_ms: end.output.attemptScheduledMs,
  };
  const { call: embed, end: e } = end.embed;
  if (e.canvases?.length) throw new Error('endToolCall writes embeds without canvases; endEmbed writes the others');
  const ended = endedEmbedColumns(e, []);
  await db
    .with('embed_end', (qc) =>
      qc
        .insertInto('embeds')
        .values({ ...embedOwner(owner, embed), ...ended })
        .onConflict((oc) => oc.column('id').doUpdateSet(ended)),
    )
    .with('stale_canvases', (qc) => qc.deleteFrom('canvases').where('embed_id', '=', embed.id))
    .with('feed_end', (qc) => feedEventInsert(qc as unknown as QueryCreator<Database>, toolFeedEntry(call, 'end', end.feed)))
    .insertInto('tool_calls')
    .values(output)
    .onConflict((oc) => oc.columns(['mission_id', 'turn', 'tool_use_id']).doUpdateSet(output).where(notFromEarlierAttempt('tool_calls')))
    .execute();
}

function embedOwner(owner: Owner, embed: EmbedCall) {
  return {
    id: embed.id,
    mission_id: embed.missionId,
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    turn: embed.turn,
    tool_use_id: embed.toolUseId,
    tool: embed.tool,
  };
}

/** The feed row of a tool call's start (the same event key as `recordToolFeed`). */
function feedStartRow(qc: QueryCreator<Database>, owner: Owner, call: ToolCallKey) {
  return qc.insertInto('feed').values({
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    mission_id: call.missionId,
    event_key: `${call.missionId}/tool/${call.turn}/${call.toolUseId}/start`,
    kind: 'tool_start',
    tool: call.tool,
    tool_use_id: call.toolUseId,
  });
}

/** A mission's tool calls in the order stored, each with the id of its embed when it has one. */
export async function listToolCallsWithEmbeds(db: Kysely<Database>, missionId: string) {
  return db
    .selectFrom('tool_calls as t')
    .leftJoin('embeds as e', (j) =>
      j.onRef('e.mission_id', '=', 't.mission_id').onRef('e.tool_use_id', '=', 't.tool_use_id').onRef('e.turn', '=', 't.turn'),
    )
    .select(['t.tool_use_id', 't.tool', 't.status', 't.duration_ms', 'e.id as embed_id'])
    .where('t.mission_id', '=', missionId)
    .orderBy('t.created_at')
    .execute();
}
