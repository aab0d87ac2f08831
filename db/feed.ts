import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely';
import { fromMission, whereOwner, type Owner } from './owner.ts';
import type { FeedRow, Database } from './schema.ts';

/** One feed entry as a Temporal activity writes it; owner and tenant come from the mission row. */
export type FeedEntry = {
  missionId: string;
  /** Unique per event (`<mission>/tool/<turn>/<toolUseId>/start`, `<mission>/end`): a retry writes no second row. */
  eventKey: string;
  /** `mission_retry`: the first row of a retried mission; its details name the mission it retries. */
  kind: 'tool_start' | 'tool_end' | 'mission_end' | 'mission_retry' | 'exchange_end';
  tool?: string;
  toolUseId?: string;
  outcome?: string;
  durationMs?: number;
  error?: string;
  details?: Record<string, unknown>;
};

/** Writes a feed row once per event key: the first write stands. */
export async function recordFeedEvent(db: Kysely<Database>, e: FeedEntry): Promise<void> {
  await feedEventInsert(db, e).execute();
}

// The columns an entry sets, each once: the insert lists them after the owner's (tenant, user, mission, taken from the
// mission row) and the feed's reads select the same list.
const ENTRY_COLUMNS = ['event_key', 'kind', 'tool', 'tool_use_id', 'outcome', 'duration_ms', 'error', 'details'] as const;
const OWNER_COLUMNS = ['tenant_id', 'user_id', 'mission_id'] as const;
type EntryColumn = (typeof ENTRY_COLUMNS)[number];

/** An entry's value per column, typed for the select the insert takes its row from (nulls need their type). */
function entryValues(e: FeedEntry): Record<EntryColumn, RawBuilder<unknown>> {
  return {
    event_key: sql`${e.eventKey}`,
    kind: sql`${e.kind}`,
    tool: sql`${e.tool ?? null}`,
    tool_use_id: sql`${e.toolUseId ?? null}`,
    outcome: sql`${e.outcome ?? null}`,
    duration_ms: sql`${e.durationMs ?? null}::integer`,
    error: sql`${e.error ?? null}`,
    details: sql`${e.details ? JSON.stringify(e.details) : null}::jsonb`,
  };
}

/** The insert of a feed row (owner and tenant from the mission row; nothing on a repeated key), to run or to embed. */
export function feedEventInsert(db: QueryCreator<Database>, e: FeedEntry) {
  const values = entryValues(e);
  return db
    .insertInto('feed')
    .columns([...OWNER_COLUMNS, ...ENTRY_COLUMNS])
    .expression((eb) =>
      fromMission(
        eb,
        e.missionId,
        ENTRY_COLUMNS.map((c) => values[c].as(c)),
      ),
    )
    .onConflict((oc) => oc.column('event_key').doNothing());
}

/** The owner's feed, newest first, after an optional id cursor, optionally for one mission. */
export async function listFeed(
  db: Kysely<Database>,
  owner: Owner,
  page: { limit: number; beforeId?: string; missionId?: string },
): Promise<FeedRow[]> {
  let q = db
    .selectFrom('feed')
    // bigserial comes back as a string from pg but not from every driver: cast so cursors are always strings.
    .select([sql<string>`id::text`.as('id'), ...OWNER_COLUMNS, ...ENTRY_COLUMNS, 'created_at'])
    .where(whereOwner(owner));
  if (page.beforeId !== undefined) q = q.where('id', '<', page.beforeId);
  if (page.missionId !== undefined) q = q.where('mission_id', '=', page.missionId);
  return q.orderBy('feed.id', 'desc').limit(page.limit).execute();
}

/** Whether the mission's feed holds a tool call with this id (every call a mission starts gets a start row). */
export async function feedHasToolCall(db: Kysely<Database>, missionId: string, toolUseId: string): Promise<boolean> {
  const row = await db
    .selectFrom('feed')
    .select('id')
    .where('mission_id', '=', missionId)
    .where('tool_use_id', '=', toolUseId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A tool call's feed row, once: the first write of a key stands (a retried activity, or the workflow ending a call
 * its activity already ended, writes nothing). The turn is in the key: some servers reuse tool-call ids per turn.
 */
export function recordToolFeed(
  db: Kysely<Database>,
  call: ToolFeedCall,
  kind: 'start' | 'end',
  end?: ToolFeedEnd,
  details?: Record<string, unknown>,
): Promise<void> {
  return recordFeedEvent(db, toolFeedEntry(call, kind, end, details));
}

type ToolFeedCall = { missionId: string; turn: number; toolUseId: string; tool: string };
export type ToolFeedEnd = { status: string; durationMs: number; error?: string | undefined };

/** A tool call's feed row, keyed by the call and `kind`. */
export function toolFeedEntry(call: ToolFeedCall, kind: 'start' | 'end', end?: ToolFeedEnd, details?: Record<string, unknown>): FeedEntry {
  return {
    missionId: call.missionId,
    tool: call.tool,
    toolUseId: call.toolUseId,
    eventKey: `${call.missionId}/tool/${call.turn}/${call.toolUseId}/${kind}`,
    kind: kind === 'start' ? 'tool_start' : 'tool_end',
    ...(end ? { outcome: end.status, durationMs: end.durationMs, ...(end.error ? { error: end.error } : {}) } : {}),
    ...(details ? { details } : {}),
  };
}
