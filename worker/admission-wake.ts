import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { dispatchQueued, hasRunningLimits, type AdmissionDeps } from '../admission/admission.ts';

/** The activities after which a slot is free: a mission's end, a session's exchange answered (idle holds none), a pause. */
const FREES_A_SLOT = new Set(['completeMission', 'failMission', 'completeExchange', 'pauseMission']);

/**
 * Frees a slot's next owner: once an activity of FREES_A_SLOT has recorded a mission's end or a session gone idle,
 * an admission pass runs and wakes the queued missions it admits. An interceptor, so the workflow's commands and the
 * activities stay as they are; not awaited, so the freeing activity's answer does not wait on the pass; a pass that
 * fails here is made up by the queued workflows' own periodic checks.
 */
export function createAdmissionWakeInterceptor(deps: AdmissionDeps): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        const type = ctx.info.activityType;
        if (hasRunningLimits(deps.config) && FREES_A_SLOT.has(type)) {
          void dispatchQueued(deps).catch((err: unknown) => deps.logger.warn('admission pass after a slot freed failed', { err }));
        }
        return out;
      },
    },
  });
}
