// Bundled into the workflow sandbox (worker/workflow-bundle.ts): deterministic code only.
import { defaultPayloadConverter, proxySinks, type WorkflowInterceptors } from '@temporalio/workflow';
import { EVENTS_HEADER, type MissionSinks } from '../contracts/events.ts';
import { claim, currentCursor, takeBatch } from './events-cursor.ts';

const { progress } = proxySinks<MissionSinks>();

/**
 * Every activity a mission schedules carries the events cursor in a header: the activity's start then proves the task
 * that logged those events was recorded, and the worker running it sends that proof (events/progress-sinks.ts). As each
 * activation ends, what it logged and claimed goes to the worker in one sink call (each sink call copies the workflow's
 * info out of its thread, so not one per event). A header is not part of what replay compares, so every recorded
 * history replays as before.
 */
export const interceptors = (): WorkflowInterceptors => ({
  outbound: [
    {
      scheduleActivity(input, next) {
        const cursor = currentCursor();
        if (!cursor) return next(input);
        claim(cursor.upTo);
        return next({ ...input, headers: { ...input.headers, [EVENTS_HEADER]: defaultPayloadConverter.toPayload(cursor) } });
      },
    },
  ],
  internals: [
    {
      concludeActivation(input, next) {
        const batch = takeBatch();
        if (batch) progress.logged(batch);
        return next(input);
      },
    },
  ],
});
