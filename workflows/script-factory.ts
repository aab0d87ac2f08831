import {
  ActivityCancellationType,
  getExternalWorkflowHandle,
  proxyActivities,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { HEARTBEAT_TIMEOUT, modelOptions, storeOptions } from './activity-options.ts';
import type { ToolCallResult } from '../contracts/mission.ts';
import {
  factoryProgressSignal,
  type FactoryAttempt,
  type FactoryOutcome,
  type FactoryPlan,
  type ScriptFactoryInput,
} from '../contracts/script-factory.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/**
 * One sandboxed run: the sandbox's own clock ends it first; heartbeats carry the cancel (the worker's 50 ms throttle
 * lets them out) and reveal a dead worker, after the same timeout as a tool call's, so a worker starved of CPU does not
 * run the script a second time beside the first.
 */
function runOptions(plan: FactoryPlan) {
  return {
    startToCloseTimeout: `${plan.runTimeoutS + 5}s`,
    scheduleToCloseTimeout: `${(plan.runTimeoutS + 5) * 3}s`,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
  } as const;
}

/**
 * The script factory, a child of the mission that called create_script: write → run on the sample → check, until
 * every postcondition passes, the same error comes back twice in a row, or FACTORY_MAX_ATTEMPTS. Each step is an
 * activity, so a worker that dies in attempt n resumes at attempt n. Each attempt is reported to the parent mission.
 */
export async function scriptFactoryWorkflow(input: ScriptFactoryInput): Promise<ToolCallResult> {
  const ids = { missionId: input.missionId, turn: input.turn, toolUseId: input.toolUseId, embedId: input.embedId };
  const prepared = await store.prepareFactory.executeWithOptions({ summary: 'check the request' }, [ids]);
  if (!prepared.ok) {
    const outcome: FactoryOutcome = { stoppedBy: 'invalid', attempts: [], maxAttempts: 0, error: prepared.error };
    return store.finishFactory.executeWithOptions({ summary: 'refused' }, [{ ...ids, outcome }]);
  }
  const { plan } = prepared;
  const { writeScript } = proxyActivities<MissionActivities>(modelOptions(input.modelTaskQueue));
  const { runFactoryAttempt } = proxyActivities<MissionActivities>(runOptions(plan));
  const parent = workflowInfo().parent;
  const attempts: FactoryAttempt[] = [];
  let previous: { source: string; error: string; key: string } | undefined;
  let stoppedBy: FactoryOutcome['stoppedBy'] = 'attempt_limit';
  let source: string | undefined;

  for (let attempt = 1; attempt <= plan.maxAttempts; attempt++) {
    const message = previous ? `attempt ${attempt}; the last failed: ${previous.error.slice(0, 300)}` : `attempt ${attempt}`;
    setCurrentDetails(`**${plan.skill}/${plan.script}** · ${message}`);
    // The parent logs it as a tool_attempt event: a signal is in both histories, so the event survives replays.
    if (parent)
      await getExternalWorkflowHandle(parent.workflowId).signal(factoryProgressSignal, {
        toolUseId: input.toolUseId,
        progress: attempt,
        total: plan.maxAttempts,
        message,
      });
    const step = { ...ids, plan, attempt };
    const written = await writeScript.executeWithOptions({ summary: `attempt ${attempt}: write` }, [
      { ...step, ...(previous ? { previous: { source: previous.source, error: previous.error } } : {}) },
    ]);
    const ran = written.ok
      ? await runFactoryAttempt.executeWithOptions({ summary: `attempt ${attempt}: run on the sample` }, [
          { ...step, source: written.source },
        ])
      : { ok: false as const, error: written.error, errorKey: written.error, durationMs: 0 };
    attempts.push({
      attempt,
      passed: ran.ok,
      ...(ran.ok ? {} : { error: ran.error.slice(0, 1000) }),
      modelMs: written.durationMs,
      runMs: ran.durationMs,
    });
    if (ran.ok && written.ok) {
      stoppedBy = 'converged';
      source = written.source;
      break;
    }
    if (!ran.ok && previous?.key === ran.errorKey) {
      stoppedBy = 'repeated_error';
      break;
    }
    if (!ran.ok) previous = { source: written.ok ? written.source : '', error: ran.error, key: ran.errorKey };
  }
  const outcome: FactoryOutcome = { stoppedBy, attempts, maxAttempts: plan.maxAttempts, ...(source ? { source } : {}) };
  return store.finishFactory.executeWithOptions({ summary: stoppedBy === 'converged' ? 'store the version' : 'record the attempts' }, [
    { ...ids, plan, outcome },
  ]);
}
