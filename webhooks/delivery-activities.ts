import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { backoffMs, WEBHOOK_GONE, WEBHOOK_RUN, type NextDelivery, type WebhookActivities } from '../contracts/webhooks.ts';
import type { Database, WebhookDeliveryRow, WebhookRow } from '../db/schema.ts';
import {
  disableWebhook,
  failDelivery,
  findDelivery,
  findWebhook,
  oldestPendingDelivery,
  recordAttempt,
  recordAttemptThenNext,
} from '../db/webhooks.ts';
import { allowList, checkWebhookUrl } from './address-guard.ts';
import { sendWebhook, type SendOutcome } from './send.ts';
import { signedHeaders } from './signing.ts';

export type WebhookDeps = { db: Kysely<Database>; config: Pick<Config, 'webhooks'> };

/** The activities of an endpoint's delivery workflow (workflows/webhook-delivery.ts), on the missions task queue. */
export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const { db } = deps;
  const allowed = allowList(deps.config.webhooks.allowPrivateNetworks);
  const windowMs = deps.config.webhooks.retryHours * 3_600_000;
  const owed = (row: WebhookDeliveryRow): NextDelivery => ({
    deliveryId: row.id,
    deadlineMs: row.pending_since.getTime() + windowMs,
    // A run's attempt of it failed: the next one waits for its backoff.
    ...(row.next_attempt_at ? { retryAtMs: row.next_attempt_at.getTime() } : {}),
  });
  /** One signed POST, the URL checked again first: what its name resolves to may have changed since it was registered. */
  const send = async (hook: WebhookRow, delivery: WebhookDeliveryRow): Promise<SendOutcome> => {
    const check = await checkWebhookUrl(hook.url, allowed);
    if (!check.ok) return { durationMs: 0, error: `refused: ${check.reason}` };
    const body = JSON.stringify(delivery.payload);
    return sendWebhook(check.url, signedHeaders(delivery.id, body, signingSecrets(hook), new Date()), body, allowed);
  };
  return {
    async nextWebhookDelivery({ webhookId }) {
      const hook = await findWebhook(db, webhookId);
      if (!hook || hook.disabled_at) return undefined;
      const next = await oldestPendingDelivery(db, webhookId);
      return next && owed(next);
    },

    async deliverWebhook({ deliveryId, attempted = 0 }) {
      const first = await findDelivery(db, deliveryId);
      // The endpoint is read once per run: a run lasts seconds, and deleting it deletes its rows.
      const hook = first && (await findWebhook(db, first.webhook_id));
      if (!first || first.status !== 'pending' || !hook || hook.disabled_at) return { delivered: 0, next: undefined };
      const ctx = Context.current();
      // Beats through the run, so a worker that dies mid-request or between rows is known within seconds.
      const beat = setInterval(() => ctx.heartbeat(), 1_000);
      try {
        const started = Date.now();
        let delivered = 0;
        for (let delivery = first; ;) {
          const outcome = await send(hook, delivery);
          const ok = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
          if (ok) {
            const row = await recordAttemptThenNext(db, delivery, { ...outcome, delivered: true });
            delivered++;
            if (!row) return { delivered, next: undefined };
            const next = owed(row);
            // The run goes on while within its bounds; a delivery with a backoff to wait or its window spent is the workflow's.
            const more =
              delivered < WEBHOOK_RUN.rows && Date.now() - started < WEBHOOK_RUN.ms && !next.retryAtMs && next.deadlineMs > Date.now();
            if (!more || ctx.cancellationSignal.aborted) return { delivered, next };
            delivery = row;
            continue;
          }
          // The activity's own delivery counts its attempts from Temporal's; a later row of the run is at its first.
          const attempt = delivered === 0 ? attempted + ctx.info.attempt : 1;
          const gone = outcome.statusCode === 410;
          const nextAttemptAt = gone ? undefined : new Date(Date.now() + backoffMs(attempt));
          await recordAttempt(db, delivery.id, { ...outcome, delivered: false, nextAttemptAt });
          if (delivered > 0)
            return { delivered, next: { ...owed(delivery), ...(gone ? { gone: true } : { retryAtMs: nextAttemptAt!.getTime() }) } };
          if (gone) throw ApplicationFailure.nonRetryable('the receiver answered 410 Gone', WEBHOOK_GONE);
          throw ApplicationFailure.retryable(outcome.error ?? `the receiver answered ${outcome.statusCode}`, 'WebhookNotDelivered');
        }
      } finally {
        clearInterval(beat);
      }
    },

    async giveUpWebhook({ deliveryId, why }) {
      const delivery = await findDelivery(db, deliveryId);
      if (!delivery) return;
      const last = delivery.last_status_code !== null ? `HTTP ${delivery.last_status_code}` : (delivery.last_error ?? 'no answer');
      const reason =
        why === 'gone'
          ? 'the receiver answered 410 Gone'
          : `no attempt succeeded within WEBHOOK_RETRY_HOURS (${deps.config.webhooks.retryHours} h, ${delivery.attempts} attempts; last: ${last})`;
      await failDelivery(db, deliveryId, reason);
      await disableWebhook(db, delivery.webhook_id, reason);
    },
  };
}

/** The current secret, and the previous one while the rotation's overlap lasts. */
function signingSecrets(hook: WebhookRow): string[] {
  const overlapping = hook.previous_secret && hook.previous_secret_until && hook.previous_secret_until.getTime() > Date.now();
  return overlapping ? [hook.secret, hook.previous_secret!] : [hook.secret];
}
