import { z } from 'zod';
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } from '../contracts/webhooks.ts';
import { timestamp } from './openapi/route-doc.ts';

// A webhook endpoint's request bodies and replies. The URL's address rules (https, no private networks) are checked
// by the service, which resolves it: a 400 naming `url`.

export const createWebhookBody = z
  .object({
    url: z.string().trim().min(1).max(2048),
    events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
    description: z.string().trim().max(500).optional(),
  })
  .strict();
export type CreateWebhookBody = z.infer<typeof createWebhookBody>;

export const webhookSchema = z.looseObject({
  id: z.uuid(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  /** Set when deliveries stopped: the receiver answered 410, or no attempt succeeded for WEBHOOK_RETRY_HOURS. */
  disabled: z.looseObject({ at: timestamp, reason: z.string() }).nullable(),
  createdAt: timestamp,
  links: z.looseObject({ self: z.string(), deliveries: z.string() }),
});

/** The secret is shown once: in the answer to the create and to a rotation. */
export const webhookWithSecretSchema = webhookSchema.extend({
  secret: z.string(),
  /** After a rotation: until when the previous secret still signs beside the new one. */
  previousSecretExpiresAt: timestamp.nullable(),
});

export const deliverySchema = z.looseObject({
  /** The Standard Webhooks `webhook-id`: the same on every attempt and redelivery. */
  id: z.string(),
  type: z.enum([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT]),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastDurationMs: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: timestamp.nullable(),
  createdAt: timestamp,
  deliveredAt: timestamp.nullable(),
  payload: z.looseObject({ type: z.string(), timestamp: timestamp, data: z.looseObject({}) }),
});
