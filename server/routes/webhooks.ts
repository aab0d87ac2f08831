import { Router } from 'express';
import { z } from 'zod';
import type { WebhookDeliveryRow, WebhookRow } from '../../db/schema.ts';
import { deleteWebhook, listDeliveries, listOwnedWebhooks } from '../../db/webhooks.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cursorKey, nextCursor, SEQ_KIND, seqCursorParam } from '../cursor.ts';
import { page, routeGroup } from '../openapi/route-doc.ts';
import { createWebhook, ownedWebhook, redeliverDelivery, rotateSecret, sendTestEvent } from '../webhook-service.ts';
import { createWebhookBody, deliverySchema, webhookSchema, webhookWithSecretSchema, type CreateWebhookBody } from '../webhook-schemas.ts';
import { queryInt, validate } from '../validate.ts';

const deliveriesQuery = z.object({ limit: queryInt(1, 100).default(20), cursor: seqCursorParam().optional() }).strict();

const read = { capabilities: ['mission.read' as const] };
const run = { capabilities: ['mission.run' as const] };
/** The OpenAPI documentation of the routes below. */
export const webhookRouteDocs = routeGroup('/api/v1/webhooks', 'webhooks', [
  {
    method: 'post',
    path: '/',
    summary: 'Register a webhook endpoint for events of your missions; the signing secret is shown in this answer only',
    access: run,
    body: createWebhookBody,
    responses: { 201: webhookWithSecretSchema },
  },
  {
    method: 'get',
    path: '/',
    summary: "The caller's webhook endpoints",
    access: read,
    responses: { 200: z.looseObject({ items: z.array(webhookSchema) }) },
  },
  { method: 'get', path: '/:id', summary: 'A webhook endpoint (never its secret)', access: read, responses: { 200: webhookSchema } },
  {
    method: 'delete',
    path: '/:id',
    summary: 'Delete a webhook endpoint and its deliveries',
    access: run,
    responses: { 204: { media: 'none' } },
  },
  {
    method: 'get',
    path: '/:id/deliveries',
    summary: "An endpoint's deliveries, newest first: attempts, status codes, durations, next retry",
    access: read,
    query: deliveriesQuery,
    responses: { 200: page(deliverySchema) },
  },
  {
    method: 'post',
    path: '/:id/deliveries/:deliveryId/redeliver',
    summary: 'Send a delivered or failed delivery again, with the same webhook-id',
    access: run,
    responses: { 202: z.looseObject({ id: z.string(), status: z.literal('pending') }) },
  },
  {
    method: 'post',
    path: '/:id/rotate-secret',
    summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
    access: run,
    responses: { 200: webhookWithSecretSchema },
  },
  {
    method: 'post',
    path: '/:id/test',
    summary: 'Send a webhook.test event to the endpoint',
    access: run,
    responses: { 202: z.looseObject({ id: z.string(), status: z.literal('pending') }) },
  },
]);

/** Webhooks: Standard Webhooks endpoints of an owner, for the events of the owner's own missions and schedules. */
export function webhooksRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(deps.db));

  router.post('/', requireCapability('mission.run'), validate('body', createWebhookBody), async (_req, res) => {
    res.status(201).json(withSecret(await createWebhook(deps, principal(res), res.locals.body as CreateWebhookBody)));
  });

  router.get('/', requireCapability('mission.read'), async (_req, res) => {
    res.json({ items: (await listOwnedWebhooks(deps.db, principal(res))).map(view) });
  });

  router.get('/:id', requireCapability('mission.read'), async (req, res) => {
    res.json(view(await ownedWebhook(deps, principal(res), String(req.params.id))));
  });

  router.delete('/:id', requireCapability('mission.run'), async (req, res) => {
    await deleteWebhook(deps.db, (await ownedWebhook(deps, principal(res), String(req.params.id))).id);
    res.status(204).end();
  });

  router.get('/:id/deliveries', requireCapability('mission.read'), validate('query', deliveriesQuery), async (req, res) => {
    const { limit, cursor } = res.locals.query as z.infer<typeof deliveriesQuery>;
    const hook = await ownedWebhook(deps, principal(res), String(req.params.id));
    const rows = await listDeliveries(deps.db, hook.id, { limit, beforeSeq: cursor ? cursorKey(cursor) : undefined });
    res.json({ items: rows.map(deliveryView), nextCursor: nextCursor(rows, limit, SEQ_KIND, (r) => r.seq) });
  });

  router.post('/:id/deliveries/:deliveryId/redeliver', requireCapability('mission.run'), async (req, res) => {
    await redeliverDelivery(deps, principal(res), String(req.params.id), String(req.params.deliveryId));
    res.status(202).json({ id: String(req.params.deliveryId), status: 'pending' });
  });

  router.post('/:id/rotate-secret', requireCapability('mission.run'), async (req, res) => {
    res.json(withSecret(await rotateSecret(deps, principal(res), String(req.params.id))));
  });

  router.post('/:id/test', requireCapability('mission.run'), async (req, res) => {
    res.status(202).json({ id: await sendTestEvent(deps, principal(res), String(req.params.id)), status: 'pending' });
  });
  return router;
}

const view = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  disabled: w.disabled_at ? { at: w.disabled_at, reason: w.disabled_reason ?? '' } : null,
  createdAt: w.created_at,
  links: { self: `/api/v1/webhooks/${w.id}`, deliveries: `/api/v1/webhooks/${w.id}/deliveries` },
});

const withSecret = (w: WebhookRow) => ({
  ...view(w),
  secret: w.secret,
  previousSecretExpiresAt: w.previous_secret ? w.previous_secret_until : null,
});

const deliveryView = (d: WebhookDeliveryRow) => ({
  id: d.id,
  type: d.type,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code,
  lastDurationMs: d.last_duration_ms,
  lastError: d.last_error,
  nextAttemptAt: d.status === 'pending' ? d.next_attempt_at : null,
  createdAt: d.created_at,
  deliveredAt: d.delivered_at,
  payload: d.payload,
});
