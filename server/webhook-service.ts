import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { ConflictError, NotFoundError, ValidationError } from '../contracts/errors.ts';
import { WEBHOOK_TEST_EVENT } from '../contracts/webhooks.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, WebhookRow } from '../db/schema.ts';
import { webhookEventInsert } from '../db/webhook-events.ts';
import { findDelivery, findOwnedWebhook, insertWebhook, redeliver, rotateWebhookSecret } from '../db/webhooks.ts';
import { allowList, checkWebhookUrl } from '../webhooks/address-guard.ts';
import { newWebhookSecret } from '../webhooks/signing.ts';
import { wakeWebhooks } from '../webhooks/wake.ts';
import type { CreateWebhookBody } from './webhook-schemas.ts';

/** How long the previous secret keeps signing after a rotation, so receivers can switch at their pace. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export type WebhookServiceDeps = { db: Kysely<Database>; temporal: Client; config: Pick<Config, 'temporal' | 'webhooks'> };

/** Records an endpoint whose URL passes the address rules now (they are checked again at every delivery). */
export async function createWebhook(deps: WebhookServiceDeps, owner: Owner, body: CreateWebhookBody): Promise<WebhookRow> {
  const check = await checkWebhookUrl(body.url, allowList(deps.config.webhooks.allowPrivateNetworks));
  if (!check.ok) throw new ValidationError(`url: ${check.reason}`, { fields: [{ field: 'url', message: check.reason }] });
  return insertWebhook(deps.db, {
    id: randomUUID(),
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    url: check.url.toString(),
    events: [...new Set(body.events)],
    description: body.description ?? null,
    secret: newWebhookSecret(),
  });
}

export async function ownedWebhook(deps: Pick<WebhookServiceDeps, 'db'>, owner: Owner, id: string): Promise<WebhookRow> {
  const row = await findOwnedWebhook(deps.db, owner, id);
  if (!row) throw new NotFoundError('webhook not found');
  return row;
}

/** A new secret; the current one signs beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(deps: WebhookServiceDeps, owner: Owner, id: string): Promise<WebhookRow> {
  const row = await ownedWebhook(deps, owner, id);
  return rotateWebhookSecret(deps.db, row.id, newWebhookSecret(), new Date(Date.now() + ROTATION_OVERLAP_MS));
}

/** Sends a delivery again, same `webhook-id`, after the endpoint's other pending ones that came before it. */
export async function redeliverDelivery(deps: WebhookServiceDeps, owner: Owner, id: string, deliveryId: string): Promise<void> {
  const row = await enabledWebhook(deps, owner, id);
  const delivery = await findDelivery(deps.db, deliveryId);
  if (!delivery || delivery.webhook_id !== row.id) throw new NotFoundError('delivery not found');
  if (delivery.status === 'pending') throw new ConflictError('the delivery is still pending: it is being attempted');
  await redeliver(deps.db, delivery.id);
  await wakeWebhooks(deps, [row.id]);
}

/** Enqueues a `webhook.test` event for this endpoint alone, delivered like any other; returns its delivery's id. */
export async function sendTestEvent(deps: WebhookServiceDeps, owner: Owner, id: string): Promise<string> {
  const row = await enabledWebhook(deps, owner, id);
  const inserted = await webhookEventInsert(deps.db, { table: 'webhooks', id: row.id }, [
    {
      type: WEBHOOK_TEST_EVENT,
      eventKey: `test/${randomUUID()}`,
      data: { webhookId: row.id, links: { webhook: `/api/v1/webhooks/${row.id}` } },
      only: row.id,
    },
  ])
    .returning('id')
    .executeTakeFirstOrThrow();
  await wakeWebhooks(deps, [row.id]);
  return inserted.id;
}

async function enabledWebhook(deps: WebhookServiceDeps, owner: Owner, id: string): Promise<WebhookRow> {
  const row = await ownedWebhook(deps, owner, id);
  if (row.disabled_at) throw new ConflictError(`the webhook is disabled: ${row.disabled_reason}`);
  return row;
}
