import { Context } from '@temporalio/activity';
import type { ProviderLimits } from '../config/provider-limits.ts';
import { settleCall } from '../db/provider-limits.ts';
import { recordSend } from '../db/provider-sends.ts';
import type { ActivityDeps } from './deps.ts';
import { beat } from './checkpoint.ts';

/**
 * A model call's part in PROVIDER_LIMITS once the workflow reserved its turn (a turn's call and a compaction's summary
 * call alike): each attempt's send is paced, and the reply's usage settles the reservation. Without a reservation (the
 * target has no limits) both do nothing.
 */
export function limitedCall(db: ActivityDeps['db'], limits: ProviderLimits, target: string, reservation: string | undefined) {
  const limit = reservation ? limits[target] : undefined;
  return {
    /**
     * Before each attempt's send: waits (heartbeating) until a request to the target may leave under its requests per
     * minute, and records it. The reservation gave the call its turn, but a call granted early and sent late (behind the
     * model slots) must not make a burst with the calls after it.
     */
    async beforeSend(): Promise<void> {
      if (!limit?.requestsPerMinute) return;
      const ctx = Context.current();
      for (;;) {
        const { waitMs } = await recordSend(db, target, limit.requestsPerMinute);
        if (waitMs === 0) return;
        // With the checkpoint: a bare heartbeat would erase the tries counted so far (checkpoint.ts).
        beat(ctx);
        await ctx.sleep(Math.min(waitMs, 1_000));
      }
    },
    /** After the reply: the bucket gets back what the estimate took beyond the tokens the provider counted (once). */
    async settle(used: { inputTokens: number; outputTokens: number }): Promise<void> {
      if (!reservation || !limit) return;
      const caps = { inputTokens: limit.inputTokensPerMinute ?? 0, outputTokens: limit.outputTokensPerMinute ?? 0 };
      await db.transaction().execute((trx) => settleCall(trx, reservation, used, caps));
    },
  };
}
