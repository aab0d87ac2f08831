import { sql, type QueryCreator } from 'kysely';
import type { Database } from './schema.ts';

/** Whose endpoints take an event: the owner of this mission, schedule or endpoint. */
export type EventSource = { table: 'missions' | 'schedules' | 'webhooks'; id: string };

/** An event as its recorder states it: its type, its key, and the thin data receivers get. */
export type WebhookEvent = {
  type: string;
  /** Unique per event (`<mission>/end`, `<mission>/idle/<n>`): a retried recording enqueues nothing twice. */
  eventKey: string;
  data: Record<string, unknown>;
  /** This endpoint alone, whatever events it takes (the test event). */
  only?: string;
};

/**
 * The insert of events' deliveries, one per event per endpoint of the source's owner that takes its type and is
 * enabled, to embed in the statement (or transaction) that records the events: an event is never recorded without
 * them, nor they without it. The payload is the Standard Webhooks shape `{type, timestamp, data}`; the row id is the
 * `webhook-id`. No events: a statement that inserts nothing.
 */
export function webhookEventInsert(qc: QueryCreator<Database>, source: EventSource, events: readonly WebhookEvent[]) {
  const timestamp = new Date().toISOString();
  const rows = JSON.stringify(
    events.map((e) => ({ type: e.type, key: e.eventKey, only: e.only ?? null, payload: { type: e.type, timestamp, data: e.data } })),
  );
  const owner = sql`(select o.tenant_id, o.user_id from ${sql.table(source.table)} o where o.id = ${source.id})`;
  return qc
    .insertInto('webhook_deliveries')
    .columns(['id', 'webhook_id', 'source_id', 'event_key', 'type', 'payload'])
    .expression(
      qc
        .selectFrom('webhooks')
        .innerJoin(sql<{ e: unknown }>`jsonb_array_elements(${rows}::jsonb)`.as('ev'), (j) => j.onTrue())
        .select([
          sql<string>`'msg_' || replace(gen_random_uuid()::text, '-', '')`.as('id'),
          'webhooks.id as webhook_id',
          sql<string>`${source.id}`.as('source_id'),
          sql<string>`ev.value->>'key'`.as('event_key'),
          sql<string>`ev.value->>'type'`.as('type'),
          sql<string>`ev.value->'payload'`.as('payload'),
        ])
        .where(sql<boolean>`(webhooks.tenant_id, webhooks.user_id) = ${owner}`)
        .where('webhooks.disabled_at', 'is', null)
        .where(
          sql<boolean>`case when ev.value->>'only' is null then ev.value->>'type' = any(webhooks.events) else webhooks.id = ev.value->>'only' end`,
        ),
    )
    .onConflict((oc) => oc.columns(['webhook_id', 'event_key']).doNothing());
}

/**
 * The endpoints owed a delivery of `sourceId` once the statement commits, as a part of that statement: those its
 * `deliveries` CTE (`webhookEventInsert(...).returning('webhook_id')`) inserts (a statement does not see its own CTE's
 * rows) and those already pending (a retried recording inserts nothing new). What the wake-up after the answer wakes,
 * with no read of its own; one not woken is the sweep's.
 */
export async function owedEndpoints<DB extends Database & { deliveries: { webhook_id: string } }>(
  withRows: QueryCreator<DB>,
  sourceId: string,
): Promise<string[]> {
  // Kysely's builders are invariant in their tables: seen through the tables this query reads, `deliveries` and ours.
  // The pending ones come from the expression builder: a select of `withRows` would repeat its CTEs in the union.
  const rows = await (withRows as unknown as QueryCreator<Database & { deliveries: { webhook_id: string } }>)
    .selectFrom('deliveries')
    .select('webhook_id')
    .union((eb) =>
      eb.selectFrom('webhook_deliveries').select('webhook_id').where('source_id', '=', sourceId).where('status', '=', 'pending'),
    )
    .execute();
  return rows.map((r) => r.webhook_id);
}

export const missionLinks = (missionId: string) => ({
  mission: `/api/v1/missions/${missionId}`,
  events: `/api/v1/missions/${missionId}/events`,
});

/** A mission's end as an event: `mission.completed`, `mission.failed` or `mission.cancelled`. */
export const missionEndEvent = (missionId: string, status: 'completed' | 'failed' | 'cancelled'): WebhookEvent => ({
  type: `mission.${status}`,
  eventKey: `${missionId}/end`,
  data: { missionId, status, links: missionLinks(missionId) },
});

/**
 * A mission at its token or cost budget: stopped by it (it completes, with what it had), or, with `budgetPolicy:
 * "pause"`, paused after turn `pausedAfter` until the budget is raised (one delivery per pause).
 */
export const budgetReachedEvent = (missionId: string, pausedAfter?: number): WebhookEvent => ({
  type: 'budget.reached',
  eventKey: pausedAfter === undefined ? `${missionId}/budget` : `${missionId}/budget/turn-${pausedAfter}`,
  data: {
    missionId,
    status: pausedAfter === undefined ? 'completed' : 'paused',
    ...(pausedAfter === undefined ? {} : { turn: pausedAfter }),
    links: missionLinks(missionId),
  },
});

export const missionSource = (missionId: string): EventSource => ({ table: 'missions', id: missionId });
