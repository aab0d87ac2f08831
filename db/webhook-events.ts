import { sql, type QueryCreator } from 'kysely';
import type { Database } from './schema.ts';

/** An event as its recorder states it: what it is about (a mission, a schedule) and the thin data receivers get. */
export type WebhookEvent = {
  type: string;
  /** Unique per event (`<mission>/end`, `<mission>/idle/<n>`): a retried recording enqueues nothing twice. */
  eventKey: string;
  /** Whose endpoints take it: the owner of this mission or schedule. */
  source: { table: 'missions' | 'schedules' | 'webhooks'; id: string };
  data: Record<string, unknown>;
  /** This endpoint alone, whatever events it takes (the test event). */
  only?: string;
};

/**
 * The insert of an event's deliveries, one per endpoint of the source's owner that takes this type and is enabled, to
 * embed in the statement (or transaction) that records the event: an event is never recorded without them, nor they
 * without it. The payload is the Standard Webhooks shape `{type, timestamp, data}`; the row id is the `webhook-id`.
 */
export function webhookEventInsert(qc: QueryCreator<Database>, e: WebhookEvent) {
  const payload = JSON.stringify({ type: e.type, timestamp: new Date().toISOString(), data: e.data });
  const owner = sql`(select o.tenant_id, o.user_id from ${sql.table(e.source.table)} o where o.id = ${e.source.id})`;
  let endpoints = qc
    .selectFrom('webhooks')
    .where(sql<boolean>`(webhooks.tenant_id, webhooks.user_id) = ${owner}`)
    .where('webhooks.disabled_at', 'is', null);
  endpoints =
    e.only !== undefined ? endpoints.where('webhooks.id', '=', e.only) : endpoints.where(sql<boolean>`${e.type} = any(webhooks.events)`);
  return qc
    .insertInto('webhook_deliveries')
    .columns(['id', 'webhook_id', 'source_id', 'event_key', 'type', 'payload'])
    .expression(
      endpoints.select([
        sql<string>`'msg_' || replace(gen_random_uuid()::text, '-', '')`.as('id'),
        'webhooks.id as webhook_id',
        sql<string>`${e.source.id}`.as('source_id'),
        sql<string>`${e.eventKey}`.as('event_key'),
        sql<string>`${e.type}`.as('type'),
        sql<string>`${payload}::jsonb`.as('payload'),
      ]),
    )
    .onConflict((oc) => oc.columns(['webhook_id', 'event_key']).doNothing());
}

/** A mission's end as an event: `mission.completed`, `mission.failed` or `mission.cancelled`. */
export function missionEndEvent(missionId: string, status: 'completed' | 'failed' | 'cancelled'): WebhookEvent {
  return {
    type: `mission.${status}`,
    eventKey: `${missionId}/end`,
    source: { table: 'missions', id: missionId },
    data: { missionId, status, links: missionLinks(missionId) },
  };
}

export const missionLinks = (missionId: string) => ({
  mission: `/api/v1/missions/${missionId}`,
  events: `/api/v1/missions/${missionId}/events`,
});
