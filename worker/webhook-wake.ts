import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { afterAnswer } from '../activities/after-answer.ts';
import { endpointsOwedFor } from '../db/webhooks.ts';
import { wakeWebhooks, type WakeDeps } from '../webhooks/wake.ts';

/** The activities that record events webhooks report, each in the statement that enqueues their deliveries. */
const RECORDING = new Set([
  'completeMission',
  'failMission',
  'completeExchange',
  'pauseMission',
  'recordApproval',
  'startScheduledMission',
]);

/**
 * Wakes the delivery workflows of the endpoints owed an event once the activity that recorded it has returned (its
 * transaction committed): the event's source is the activity's `missionId` or `scheduleId`. The endpoints are those
 * the recording statement answered when the activity left them in its note (a mission's end, pause or exchange), else
 * read here. An interceptor, so the activities stay as they are; not awaited, so the activity's answer (the mission's
 * result) does not wait on it; a wake-up that fails here is made up by the sweep.
 */
export function createWebhookWakeInterceptor(deps: WakeDeps): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        if (RECORDING.has(ctx.info.activityType)) {
          const arg = input.args[0] as { missionId?: unknown; scheduleId?: unknown } | undefined;
          const source = arg?.missionId ?? arg?.scheduleId;
          const { owedEndpoints } = afterAnswer(ctx);
          if (typeof source === 'string')
            void (owedEndpoints ? Promise.resolve(owedEndpoints) : endpointsOwedFor(deps.db, source))
              .then((ids) => wakeWebhooks(deps, ids))
              .catch((err: unknown) => deps.logger.warn('webhook wake-up failed', { err, source }));
        }
        return out;
      },
    },
  });
}
