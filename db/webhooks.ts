import { sql, type Insertable, type Kysely } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, WebhookDeliveryRow, WebhookRow, WebhooksTable } from './schema.ts';

export async function insertWebhook(db: Kysely<Database>, row: Insertable<WebhooksTable>): Promise<WebhookRow> {
  return db.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow();
}

/** An endpoint of this owner; someone else's is indistinguishable from a missing one. */
export async function findOwnedWebhook(db: Kysely<Database>, owner: Owner, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
}

export async function findWebhook(db: Kysely<Database>, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The owner's endpoints, newest first. */
export async function listOwnedWebhooks(db: Kysely<Database>, owner: Owner): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where(whereOwner(owner)).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** Deletes the endpoint and its deliveries (its delivery workflow finds none and ends). */
export async function deleteWebhook(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** A new secret signs from now on; the current one keeps signing beside it until `overlapUntil`. */
export async function rotateWebhookSecret(db: Kysely<Database>, id: string, secret: string, overlapUntil: Date): Promise<WebhookRow> {
  return db
    .updateTable('webhooks')
    .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_until: overlapUntil, secret, updated_at: new Date() }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Disables an enabled endpoint with the reason; the first reason stands. */
export async function disableWebhook(db: Kysely<Database>, id: string, reason: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ disabled_at: new Date(), disabled_reason: reason, updated_at: new Date() })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .execute();
}

/** An endpoint's deliveries, newest first, before an optional `seq` cursor. */
export async function listDeliveries(
  db: Kysely<Database>,
  webhookId: string,
  page: { limit: number; beforeSeq?: string | undefined },
): Promise<WebhookDeliveryRow[]> {
  let q = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .select(sql<string>`seq::text`.as('seq'))
    .where('webhook_id', '=', webhookId);
  if (page.beforeSeq !== undefined) q = q.where('webhook_deliveries.seq', '<', page.beforeSeq);
  return q.orderBy('webhook_deliveries.seq', 'desc').limit(page.limit).execute();
}

export async function findDelivery(db: Kysely<Database>, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The endpoint's oldest pending delivery: the order receivers get their events in. */
export async function oldestPendingDelivery(db: Kysely<Database>, webhookId: string): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
}

/** One attempt's outcome: the receiver's status code (none when it never answered), how long, what went wrong. */
export type AttemptRecord = {
  statusCode?: number | undefined;
  durationMs: number;
  error?: string | undefined;
  nextAttemptAt?: Date | undefined;
};

/** Records an attempt of a pending delivery; a 2xx marks it delivered. */
export async function recordAttempt(db: Kysely<Database>, id: string, a: AttemptRecord & { delivered: boolean }): Promise<void> {
  await recording(db, id, a).execute();
}

/**
 * Records an attempt of a pending delivery and reads the endpoint's oldest other pending delivery, in one statement
 * (the update is a CTE: the select sees the rows as they were before it, hence the delivery itself left out).
 */
export async function recordAttemptThenNext(
  db: Kysely<Database>,
  delivery: Pick<WebhookDeliveryRow, 'id' | 'webhook_id'>,
  a: AttemptRecord & { delivered: boolean },
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .with('recorded', () => recording(db, delivery.id, a).returning('id'))
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', delivery.webhook_id)
    .where('status', '=', 'pending')
    .where('id', '<>', delivery.id)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
}

const recording = (db: Kysely<Database>, id: string, a: AttemptRecord & { delivered: boolean }) =>
  db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_status_code: a.statusCode ?? null,
      last_duration_ms: Math.round(a.durationMs),
      last_error: a.error ?? null,
      next_attempt_at: a.nextAttemptAt ?? null,
      ...(a.delivered ? { status: 'delivered' as const, delivered_at: new Date() } : {}),
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending');

/** A pending delivery failed for good. */
export async function failDelivery(db: Kysely<Database>, id: string, reason: string): Promise<WebhookDeliveryRow | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: reason, next_attempt_at: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Sends a delivery again with the same `webhook-id`: pending once more, its retry window starting now. */
export async function redeliver(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', pending_since: new Date(), next_attempt_at: null, delivered_at: null })
    .where('id', '=', id)
    .execute();
}

/** The endpoints owed pending deliveries of a source's events (a mission's, a schedule's): to wake once recorded. */
export async function endpointsOwedFor(db: Kysely<Database>, sourceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('webhook_id')
    .distinct()
    .where('source_id', '=', sourceId)
    .where('status', '=', 'pending')
    .execute();
  return rows.map((r) => r.webhook_id);
}

/** Enabled endpoints with a delivery pending since before `before`: the sweep's safety net for a lost wake-up. */
export async function endpointsOwedSince(db: Kysely<Database>, before: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select('d.webhook_id')
    .distinct()
    .where('d.status', '=', 'pending')
    .where('d.pending_since', '<', before)
    .where('w.disabled_at', 'is', null)
    .execute();
  return rows.map((r) => r.webhook_id);
}
