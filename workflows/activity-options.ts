import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import { toolTriesBoundS } from '../contracts/tool-tries.ts';

/** Every activity option of the mission workflow, in one place. */

/**
 * How long a model or tool attempt may go without a heartbeat before Temporal gives up on it and retries the call
 * elsewhere. Activities beat every 2 s; a worker starved of CPU can hold its event loop (and so its beats) for seconds
 * while its call is still in flight, and a shorter timeout then ran the call a second time beside the first
 * (issue 36: ~120 tool calls twice at load 34). A cancel does not wait for it (the API's announcement aborts the call
 * at once, the next beat fetches Temporal's cancellation); what waits for it is only a worker killed outright.
 */
export const HEARTBEAT_TIMEOUT = '30s';

/**
 * prepare, complete, fail, tool ends: short database work, retried through brief outages. Milliseconds normally, but a
 * loaded worker and database stretch them (each statement queued for a pooled connection, prepareMission has 14): a
 * 30 s bound abandoned such attempts and ran them again, adding load, and five abandoned attempts failed the mission
 * (issue 36). 120 s: a busy step finishes in its first attempt. A step that runs long beats (`keepAlive`,
 * activities/checkpoint.ts), so a worker killed mid-step is replaced after the heartbeat timeout, as a model or tool
 * call's is, not after 120 s.
 */
export const storeOptions: ActivityOptions = {
  startToCloseTimeout: '120s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', maximumAttempts: 5 },
};

/**
 * Model calls, on the model task queue (MODEL_CONCURRENCY slots per worker). Three tries, 2 s then 4 s apart (or the
 * provider's Retry-After): a try is a failure an attempt reports, counted by the activity in its heartbeat details
 * (MODEL_CALL_TRIES, activities/database-outage.ts), and the third is final. Temporal's attempts are the
 * infrastructure's, as a tool call's are: an attempt that timed out on its heartbeat is replaced, as often as needed
 * within the bound (three tries at the 190 s attempt timeout, three times over). Under overload the server records some
 * attempts as started whose task no worker receives (issue 36: matching gave the history service 1 s to record a
 * matched task as started, the write took longer and committed, and matching dropped the task); each times out after
 * HEARTBEAT_TIMEOUT, and with three attempts in all, three in a row failed the mission.
 */
export function modelOptions(taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '190s', // the activity aborts its HTTP call at 180 s; this is the outer guard
    scheduleToCloseTimeout: `${3 * 3 * 190}s`,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED, // set explicitly: the SDK's default is TRY_CANCEL
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '10s' },
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
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
  };
}
