import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { backoffMs, WEBHOOK_GONE, type NextDelivery, type WebhookActivities } from '../contracts/webhooks.ts';
import type { Database, WebhookRow } from '../db/schema.ts';
import { disableWebhook, failDelivery, findDelivery, findWebhook, oldestPendingDelivery, recordAttempt } from '../db/webhooks.ts';
import { allowList, checkWebhookUrl } from './address-guard.ts';
import { sendWebhook, type SendOutcome } from './send.ts';
import { signedHeaders } from './signing.ts';

export type WebhookDeps = { db: Kysely<Database>; config: Pick<Config, 'webhooks'> };

/** The activities of an endpoint's delivery workflow (workflows/webhook-delivery.ts), on the missions task queue. */
export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const { db } = deps;
  const allowed = allowList(deps.config.webhooks.allowPrivateNetworks);
  const windowMs = deps.config.webhooks.retryHours * 3_600_000;
  const nextOf = async (webhookId: string): Promise<NextDelivery | undefined> => {
    const hook = await findWebhook(db, webhookId);
    if (!hook || hook.disabled_at) return undefined;
    const next = await oldestPendingDelivery(db, webhookId);
    return next ? { deliveryId: next.id, deadlineMs: next.pending_since.getTime() + windowMs } : undefined;
  };
  return {
    nextWebhookDelivery: ({ webhookId }) => nextOf(webhookId),

    async deliverWebhook({ deliveryId }) {
      const delivery = await findDelivery(db, deliveryId);
      const hook = delivery && (await findWebhook(db, delivery.webhook_id));
      if (!delivery || delivery.status !== 'pending' || !hook || hook.disabled_at) return undefined;
      // The URL is checked again at every attempt: what its name resolves to may have changed since it was registered.
      const check = await checkWebhookUrl(hook.url, allowed);
      let outcome: SendOutcome;
      if (!check.ok) outcome = { durationMs: 0, error: `refused: ${check.reason}` };
      else {
        const body = JSON.stringify(delivery.payload);
        // Beats while the receiver takes its time, so a worker that dies mid-request is known within seconds.
        const ctx = Context.current();
        const beat = setInterval(() => ctx.heartbeat(), 1_000);
        try {
          outcome = await sendWebhook(check.url, signedHeaders(delivery.id, body, signingSecrets(hook), new Date()), body, allowed);
        } finally {
          clearInterval(beat);
        }
      }
      const delivered = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
      const gone = outcome.statusCode === 410;
      const attempt = Context.current().info.attempt;
      await recordAttempt(db, delivery.id, {
        ...outcome,
        delivered,
        ...(delivered || gone ? {} : { nextAttemptAt: new Date(Date.now() + backoffMs(attempt)) }),
      });
      if (delivered) return nextOf(hook.id);
      if (gone) throw ApplicationFailure.nonRetryable('the receiver answered 410 Gone', WEBHOOK_GONE);
      throw ApplicationFailure.retryable(outcome.error ?? `the receiver answered ${outcome.statusCode}`, 'WebhookNotDelivered');
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
