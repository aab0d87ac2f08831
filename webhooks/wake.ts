import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { WEBHOOK_DELIVERY_WORKFLOW, wakeSignal, webhookWorkflowId } from '../contracts/webhooks.ts';
import type { Database } from '../db/schema.ts';
import { endpointsOwedSince } from '../db/webhooks.ts';
import type { Logger } from '../lib/logger.ts';

export type WakeDeps = { db: Kysely<Database>; temporal: Client; config: Pick<Config, 'temporal'>; logger: Logger };

/**
 * Wakes the delivery workflow of each endpoint (signal-with-start: started when none runs). Called once the deliveries
 * are committed; a wake-up lost here is made up by the worker's sweep (`startWebhookSweep`).
 */
export async function wakeWebhooks(deps: Pick<WakeDeps, 'temporal' | 'config'>, webhookIds: readonly string[]): Promise<void> {
  await Promise.all(
    webhookIds.map((webhookId) =>
      deps.temporal.workflow.signalWithStart(WEBHOOK_DELIVERY_WORKFLOW, {
        workflowId: webhookWorkflowId(webhookId),
        taskQueue: deps.config.temporal.taskQueue,
        args: [{ webhookId }],
        signal: wakeSignal,
        signalArgs: [],
        staticSummary: `webhook deliveries of ${webhookId}`,
      }),
    ),
  );
}

/** How often the sweep looks, and how old a pending delivery must be for it (younger ones have their wake-up coming). */
const SWEEP_MS = 15_000;

/**
 * The safety net under the wake-ups: every 15 s, each enabled endpoint with a delivery pending for more than 15 s is
 * woken (a running workflow just looks again). A worker killed between a commit and its wake-up loses nothing.
 */
export function startWebhookSweep(deps: WakeDeps): { stop(): Promise<void> } {
  let round: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    round = (async () => {
      const owed = await endpointsOwedSince(deps.db, new Date(Date.now() - SWEEP_MS));
      await wakeWebhooks(deps, owed);
    })().catch((err: unknown) => deps.logger.warn('webhook sweep failed', { err }));
  }, SWEEP_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}
