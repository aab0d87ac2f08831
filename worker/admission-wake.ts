import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { dispatchQueued, hasRunningLimits, type AdmissionDeps } from '../admission/admission.ts';

/**
 * Frees a slot's next owner: once `completeMission` or `failMission` has recorded a mission's end (its slot is free),
 * an admission pass runs and wakes the queued missions it admits. An interceptor, so the workflow's commands and the
 * activities stay as they are; a pass that fails here is made up by the queued workflows' own periodic checks.
 */
export function createAdmissionWakeInterceptor(deps: AdmissionDeps): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        const type = ctx.info.activityType;
        if (hasRunningLimits(deps.config) && (type === 'completeMission' || type === 'failMission')) {
          await dispatchQueued(deps).catch((err: unknown) => deps.logger.warn('admission pass after a mission end failed', { err }));
        }
        return out;
      },
    },
  });
}
