import { defineSignal } from '@temporalio/workflow';

/**
 * Webhooks' contract: the events an endpoint may take, the one delivery workflow per endpoint (woken by a signal when
 * deliveries are owed to it) and the activities it calls. Deliveries are rows written with their event; the workflow
 * sends them one at a time, oldest first, so each endpoint receives its events in order.
 */

export const WEBHOOK_EVENTS = [
  'mission.completed',
  'mission.failed',
  'mission.cancelled',
  'mission.idle',
  'approval.requested',
  'budget.reached',
  'schedule.run_failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
/** The event `POST /webhooks/:id/test` sends; an endpoint needs not subscribe to it. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';
export const webhookWorkflowId = (webhookId: string): string => `webhook-${webhookId}`;
export type WebhookDeliveryInput = { webhookId: string };

/** Deliveries are owed: look again. Sent with signal-with-start, so it starts the workflow when none runs. */
export const wakeSignal = defineSignal('wake');

/** The oldest delivery owed to an endpoint and the end of its retry window (epoch ms). */
export type NextDelivery = { deliveryId: string; deadlineMs: number };

/**
 * The backoff between attempts of one delivery: 1 s doubling to at most 5 minutes, for as long as its retry window
 * (WEBHOOK_RETRY_HOURS) lasts, so a receiver back from an outage gets its backlog within minutes.
 */
export const WEBHOOK_BACKOFF = { initialMs: 1_000, coefficient: 2, maximumMs: 5 * 60_000 } as const;
/** The wait before attempt `attempt + 1` under that backoff. */
export const backoffMs = (attempt: number): number =>
  Math.min(WEBHOOK_BACKOFF.maximumMs, WEBHOOK_BACKOFF.initialMs * WEBHOOK_BACKOFF.coefficient ** Math.max(0, attempt - 1));

/** The failure type `deliver` throws when the receiver answered 410 Gone: no retry, the endpoint is disabled. */
export const WEBHOOK_GONE = 'WebhookGone';

export interface WebhookActivities {
  /** The endpoint's oldest pending delivery; none when there is none or the endpoint is disabled or deleted. */
  nextWebhookDelivery(input: { webhookId: string }): Promise<NextDelivery | undefined>;
  /**
   * One signed POST of the delivery, recorded as an attempt; throws unless the receiver answered 2xx. Then the
   * endpoint's next pending delivery, if any (saving the workflow a look of its own between two deliveries).
   */
  deliverWebhook(input: { deliveryId: string }): Promise<NextDelivery | undefined>;
  /**
   * The delivery failed for good, the receiver having answered 410 (`gone`) or no attempt having succeeded in its
   * retry window (`window`): recorded so, and the endpoint disabled with the reason.
   */
  giveUpWebhook(input: { deliveryId: string; why: 'gone' | 'window' }): Promise<void>;
}
