import { CancellationScope, TemporalFailure, condition, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import { evalRunEventsQuery, type EvalActivities, type EvalRunInput, type EvalRunStatus, type EvalUnit } from '../contracts/evals.ts';
import { createEvalRunLog } from './eval-run-log.ts';

const { planEvalRun, startEvalMission, gradeEvalMission, finishEvalRun } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});
// Waits as long as the mission runs; the heartbeat shows a dead worker within 15 s, and the wait resumes elsewhere.
const { awaitEvalMission } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '15s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** Below this share of the run's budget, what is left cannot pay for a mission. */
const MIN_SHARE = 0.001;

/**
 * An eval run: each unit (a case on one side, one repeat) is a real mission started through the start path of
 * `POST /missions` (admission, idempotent start), awaited, then graded; `lanes` units run at once. The budget caps
 * the sum of the missions' and the grader calls' costs: each mission gets a share of what is neither spent nor promised to a running one
 * as its own `maxCostUsd`, and once nothing is left the rest are `not_run` and the run ends `budget_reached`.
 * Cancelling the run, or a step failing for good, ends it `cancelled` or `failed` and cancels the missions still running
 * (the finish step does, outside the cancelled scope). Its progress is an event log served by the events query and
 * streamed like a mission's: each unit started, finished and graded (or not run), then the figures and the end status.
 */
export async function evalRunWorkflow(input: EvalRunInput): Promise<EvalRunStatus> {
  const log = createEvalRunLog();
  setHandler(evalRunEventsQuery, (afterSeq) => log.page(afterSeq));
  log.statusChanged('running');
  const plan = await planEvalRun(input);
  const queue = [...plan.units];
  const notRun: EvalUnit[] = [];
  let spent = 0;
  let promised = 0;
  let running = 0;
  let exhausted = false;

  /** The budget share of the next mission, waiting for running ones to settle; undefined once the budget is spent. */
  async function share(): Promise<number | undefined> {
    for (;;) {
      const free = plan.maxCostUsd - spent - promised;
      if (free > plan.maxCostUsd * MIN_SHARE) return free / (plan.lanes - running);
      if (running === 0) return undefined;
      const before = running;
      await condition(() => running < before);
    }
  }

  async function runUnit(unit: EvalUnit, maxCostUsd: number): Promise<void> {
    const { missionId, refused } = await startEvalMission({ ...input, unit, maxCostUsd });
    if (!missionId) return log.emit({ type: 'unit_not_run', ...unit, reason: refused ?? 'refused' });
    log.emit({ type: 'unit_started', ...unit, missionId });
    await awaitEvalMission({ missionId });
    log.emit({ type: 'unit_finished', ...unit, missionId });
    const graded = await gradeEvalMission({ ...input, unit, missionId });
    spent += graded.costUsd + (graded.gradingCostUsd ?? 0);
    log.emit({ type: 'unit_graded', ...unit, missionId, status: graded.status, costUsd: graded.costUsd });
  }

  /** The run's end: recorded, then logged (the units it marked not run, its figures, its status last). */
  async function finish(status: Exclude<EvalRunStatus, 'running'>, notRun: EvalUnit[]): Promise<void> {
    const end = await finishEvalRun({ ...input, status, notRun });
    for (const unit of end.notRun) log.emit({ type: 'unit_not_run', ...unit, reason: end.reason });
    log.emit({ type: 'run_summary', ...end.figures });
    log.statusChanged(status);
  }

  async function lane(): Promise<void> {
    for (let unit = queue.shift(); unit; unit = queue.shift()) {
      const cap = exhausted ? undefined : await share();
      if (cap === undefined) {
        exhausted = true;
        notRun.push(unit);
        continue;
      }
      running++;
      promised += cap;
      try {
        await runUnit(unit, cap);
      } finally {
        running--;
        promised -= cap;
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: plan.lanes }, () => lane()));
  } catch (err) {
    // A bug in this code fails the workflow task instead, so a fixed worker resumes the run.
    if (!(err instanceof TemporalFailure)) throw err;
    // The finish must run although the run's scope may be cancelled: it cancels the missions still running.
    const status = isCancellation(err) ? 'cancelled' : 'failed';
    await CancellationScope.nonCancellable(() => finish(status, [...queue, ...notRun]));
    throw err;
  }
  const status = exhausted ? 'budget_reached' : 'completed';
  await finish(status, notRun);
  return status;
}
