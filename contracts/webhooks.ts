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
/** `next`: the delivery a run named, carried over a continue-as-new (its backoff or its 410 with it). */
export type WebhookDeliveryInput = { webhookId: string; next?: NextDelivery };

/** Deliveries are owed: look again. Sent with signal-with-start, so it starts the workflow when none runs. */
export const wakeSignal = defineSignal('wake');

/**
 * The oldest delivery owed to an endpoint and the end of its retry window (epoch ms). `retryAtMs`: a run already made
 * its first attempt, which failed; the next one is due then (epoch ms). `gone`: that attempt was answered 410.
 */
export type NextDelivery = { deliveryId: string; deadlineMs: number; retryAtMs?: number; gone?: true };

/** The most deliveries one attempt of `deliverWebhook` makes in a run, and how long it goes on starting new ones. */
export const WEBHOOK_RUN = { rows: 100, ms: 10_000 } as const;

/** A run's outcome: how many deliveries it made, and the endpoint's next one (see `NextDelivery`), if any. */
export type DeliveryRun = { delivered: number; next: NextDelivery | undefined };

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
   * A run: one signed POST of the delivery, recorded as an attempt; throws unless the receiver answered 2xx. Then the
   * endpoint's next pending deliveries, in order, in the same attempt while they succeed (up to `WEBHOOK_RUN`). The
   * first of those that fails is recorded, not thrown: it is the run's `next`, with its `retryAtMs` or `gone`.
   * `attempted`: attempts of this delivery a run already made (its backoff goes on from there).
   */
  deliverWebhook(input: { deliveryId: string; attempted?: number }): Promise<DeliveryRun>;
  /**
   * The delivery failed for good, the receiver having answered 410 (`gone`) or no attempt having succeeded in its
   * retry window (`window`): recorded so, and the endpoint disabled with the reason.
   */
  giveUpWebhook(input: { deliveryId: string; why: 'gone' | 'window' }): Promise<void>;
}
