import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import { toolTriesBoundS } from '../contracts/tool-tries.ts';

/** Every activity option of the mission workflow, in one place. */

/** prepare, complete, fail, tool ends: short database work, retried through brief outages. */
export const storeOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
};

/** Model calls, on the model task queue (MODEL_CONCURRENCY slots per worker). */
export function modelOptions(taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '190s', // the activity aborts its HTTP call at 180 s; this is the outer guard
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED, // set explicitly: the SDK's default is TRY_CANCEL
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
  };
}

/**
 * A tool call. The tool's own retries (`retries` in app.yml) are spent inside the activity; Temporal's attempts are
 * for the infrastructure: a worker that dies (heartbeat timeout) or shuts down is replaced by another attempt, as
 * often as needed, until the overall bound (three times what the tries may take) closes the call as an error.
 * `taskQueue`: the tool queue (TOOL_CONCURRENCY slots per worker); absent, the workflow's own queue.
 */
export function toolOptions(tool: { timeoutS: number; retries: number }, taskQueue?: string): ActivityOptions {
  const perAttemptS = toolTriesBoundS(tool) + 5; // and a margin for the activity's own database writes
  return {
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: `${perAttemptS}s`,
    scheduleToCloseTimeout: `${perAttemptS * 3}s`,
    heartbeatTimeout: '4s', // heartbeats carry cancellation and reveal a dead worker: this bounds both delays
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
  };
}
