import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  WEBHOOK_BACKOFF,
  WEBHOOK_GONE,
  wakeSignal,
  type NextDelivery,
  type WebhookActivities,
  type WebhookDeliveryInput,
} from '../contracts/webhooks.ts';

const { nextWebhookDelivery, giveUpWebhook } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});
/** No wake-up for this long: the workflow ends; the next event's signal-with-start begins a new one. */
const IDLE = '5 minutes';
/** Deliveries per run before continue-as-new keeps the history short. */
const DELIVERIES_PER_RUN = 200;

/**
 * The deliveries of one endpoint, one at a time, oldest first (each endpoint receives its events in order). A delivery
 * is retried with exponential backoff until its receiver answers 2xx or its retry window ends; a 410, or a window
 * spent, fails it and disables the endpoint, which ends the workflow. Woken by `wake` when deliveries are recorded.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<void> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  let next: NextDelivery | undefined;
  for (let sent = 0; sent < DELIVERIES_PER_RUN && !workflowInfo().continueAsNewSuggested;) {
    if (!next) {
      // Cleared before the look, so a wake-up during it is not lost.
      woken = false;
      next = await nextWebhookDelivery(input);
      if (!next) {
        if (await condition(() => woken, IDLE)) continue;
        return;
      }
    }
    const windowLeftMs = next.deadlineMs - Date.now();
    const outcome = windowLeftMs > 0 ? await deliver(next.deliveryId, windowLeftMs) : 'window';
    if (outcome === 'gone' || outcome === 'window') {
      await giveUpWebhook({ deliveryId: next.deliveryId, why: outcome });
      return;
    }
    // The delivery's activity names the next one; none: look again (an event may have come meanwhile).
    next = outcome.next;
    sent++;
  }
  await continueAsNew<typeof webhookDeliveryWorkflow>(input);
}

/** Attempts until a 2xx (then the next delivery, if any), a 410 (`gone`) or the end of the window (`window`). */
async function deliver(deliveryId: string, windowLeftMs: number): Promise<'gone' | 'window' | { next: NextDelivery | undefined }> {
  try {
    const next = await proxyActivities<WebhookActivities>({
      startToCloseTimeout: '20s',
      heartbeatTimeout: '5s',
      scheduleToCloseTimeout: windowLeftMs,
      retry: {
        initialInterval: WEBHOOK_BACKOFF.initialMs,
        backoffCoefficient: WEBHOOK_BACKOFF.coefficient,
        maximumInterval: WEBHOOK_BACKOFF.maximumMs,
        nonRetryableErrorTypes: [WEBHOOK_GONE],
      },
    }).deliverWebhook.executeWithOptions({ summary: `delivery ${deliveryId}` }, [{ deliveryId }]);
    return { next };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return err.cause instanceof ApplicationFailure && err.cause.type === WEBHOOK_GONE ? 'gone' : 'window';
  }
}
