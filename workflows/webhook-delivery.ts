import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  backoffMs,
  WEBHOOK_BACKOFF,
  WEBHOOK_GONE,
  wakeSignal,
  type DeliveryRun,
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
/** Deliveries made before continue-as-new keeps the history short. */
const DELIVERIES_BEFORE_CONTINUE_AS_NEW = 200;

/**
 * The deliveries of one endpoint, oldest first (each endpoint receives its events in order), in runs: an activity
 * sends one delivery, retried with exponential backoff until its receiver answers 2xx or its retry window ends, then
 * goes on with the next ones while they succeed. The first of those that fails is the next delivery: its retry waits
 * for its backoff on a durable timer. A 410, or a window spent, fails a delivery and disables the endpoint, which ends
 * the workflow. Woken by `wake` when deliveries are recorded.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<void> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  let next: NextDelivery | undefined = input.next;
  for (let sent = 0; sent < DELIVERIES_BEFORE_CONTINUE_AS_NEW && !workflowInfo().continueAsNewSuggested;) {
    if (!next) {
      // Cleared before the look, so a wake-up during it is not lost.
      woken = false;
      next = await nextWebhookDelivery({ webhookId: input.webhookId });
      if (!next) {
        if (await condition(() => woken, IDLE)) continue;
        return;
      }
    }
    if (next.retryAtMs !== undefined && next.retryAtMs > Date.now()) await sleep(next.retryAtMs - Date.now());
    const windowLeftMs = next.deadlineMs - Date.now();
    const run = next.gone ? 'gone' : windowLeftMs > 0 ? await deliver(next, windowLeftMs) : 'window';
    if (run === 'gone' || run === 'window') {
      await giveUpWebhook({ deliveryId: next.deliveryId, why: run });
      return;
    }
    // The run names the next delivery; none: look again (an event may have come meanwhile).
    next = run.next;
    sent += run.delivered;
  }
  await continueAsNew<typeof webhookDeliveryWorkflow>({ webhookId: input.webhookId, ...(next ? { next } : {}) });
}

/** A run from `next`: attempts until a 2xx (then the deliveries after it), a 410 (`gone`) or the window's end (`window`). */
async function deliver(next: NextDelivery, windowLeftMs: number): Promise<'gone' | 'window' | DeliveryRun> {
  // A run already made its first attempt: the backoff goes on from the second.
  const attempted = next.retryAtMs === undefined ? 0 : 1;
  try {
    return await proxyActivities<WebhookActivities>({
      // A run starts no new delivery after WEBHOOK_RUN.ms; the last one may take its 10 s.
      startToCloseTimeout: '30s',
      heartbeatTimeout: '5s',
      scheduleToCloseTimeout: windowLeftMs,
      retry: {
        initialInterval: backoffMs(attempted + 1),
        backoffCoefficient: WEBHOOK_BACKOFF.coefficient,
        maximumInterval: WEBHOOK_BACKOFF.maximumMs,
        nonRetryableErrorTypes: [WEBHOOK_GONE],
      },
    }).deliverWebhook.executeWithOptions({ summary: `delivery ${next.deliveryId}` }, [
      { deliveryId: next.deliveryId, ...(attempted ? { attempted } : {}) },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return err.cause instanceof ApplicationFailure && err.cause.type === WEBHOOK_GONE ? 'gone' : 'window';
  }
}
