import { sql, type Kysely, type QueryCreator } from 'kysely';
import { fromMission, whereOwner, type Owner } from './owner.ts';
import type { FeedRow, Database } from './schema.ts';

/** One feed entry as a Temporal activity writes it; owner and tenant come from the mission row. */
export type FeedEntry = {
  missionId: string;
  /** Unique per event (`<mission>/tool/<turn>/<toolUseId>/start`, `<mission>/end`): a retry writes no second row. */
  eventKey: string;
  /** `mission_retry`: the first row of a retried mission; its details name the mission it retries. */
  kind: 'tool_start' | 'tool_end' | 'mission_end' | 'mission_retry';
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

/** The insert of a feed row (owner and tenant from the mission row; nothing on a repeated key), to run or to embed. */
export function feedEventInsert(db: QueryCreator<Database>, e: FeedEntry) {
  const values = {
    kind: e.kind,
    tool: e.tool ?? null,
    tool_use_id: e.toolUseId ?? null,
    outcome: e.outcome ?? null,
    duration_ms: e.durationMs ?? null,
    error: e.error ?? null,
    details: e.details ? JSON.stringify(e.details) : null,
  };
  return db
    .insertInto('feed')
    .columns([
      'tenant_id',
      'user_id',
      'mission_id',
      'event_key',
      'kind',
      'tool',
      'tool_use_id',
      'outcome',
      'duration_ms',
      'error',
      'details',
    ])
    .expression((eb) =>
      fromMission(eb, e.missionId, [
        sql`${e.eventKey}`.as('event_key'),
        sql`${values.kind}`.as('kind'),
        sql`${values.tool}`.as('tool'),
        sql`${values.tool_use_id}`.as('tool_use_id'),
        sql`${values.outcome}`.as('outcome'),
        sql`${values.duration_ms}::integer`.as('duration_ms'),
        sql`${values.error}`.as('error'),
        sql`${values.details}::jsonb`.as('details'),
      ]),
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
    .select([
      sql<string>`id::text`.as('id'),
      'tenant_id',
      'user_id',
      'mission_id',
      'event_key',
      'kind',
      'tool',
      'tool_use_id',
      'outcome',
      'duration_ms',
      'error',
      'details',
      'created_at',
    ])
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
  call: { missionId: string; turn: number; toolUseId: string; tool: string },
  kind: 'start' | 'end',
  end?: { status: string; durationMs: number; error?: string | undefined },
  details?: Record<string, unknown>,
): Promise<void> {
  return recordFeedEvent(db, {
    missionId: call.missionId,
    tool: call.tool,
    toolUseId: call.toolUseId,
    eventKey: `${call.missionId}/tool/${call.turn}/${call.toolUseId}/${kind}`,
    kind: kind === 'start' ? 'tool_start' : 'tool_end',
    ...(end ? { outcome: end.status, durationMs: end.durationMs, ...(end.error ? { error: end.error } : {}) } : {}),
    ...(details ? { details } : {}),
  });
}
