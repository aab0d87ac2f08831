import { WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../config/config.ts';
import { staleStarting } from '../db/admission.ts';
import { updateMissionIfStatus } from '../db/missions.ts';
import type { MissionRow } from '../db/schema.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';
import { admitSignal, missionWorkflowId } from '../contracts/mission.ts';
import { dispatchQueued, hasRunningLimits, type AdmissionDeps } from './admission.ts';
import { markRunning, startMissionWorkflow } from './mission-start.ts';

/** Rows one round settles at most; the next round takes the rest. */
const ROUND_SIZE = 100;
/** How long one Temporal call of the settler may take (the SDK alone would retry an unavailable server for ~20 s). */
const CALL_MS = 5_000;

/** Admission's dependencies, and the task queues a settled mission's workflow starts on. */
export type StartSettlerDeps = Omit<AdmissionDeps, 'config'> & { config: Pick<Config, 'admission' | 'temporal' | 'sessions'> };

/**
 * Settles one mission left `starting` (its start failed, or its process stopped half-way). With an idempotency key,
 * which promised this very mission, its workflow is started (or found: the start is idempotent); then `admit` is
 * signalled, which wakes a workflow queued for this slot and proves the workflow exists. It exists: `running`. It does
 * not (no key): `failed`, phase `start`, since the client was told it was not started. Unchanged while Temporal cannot
 * say. Old enough rows only (see `startSettler`), so a start still in flight in the API is not raced.
 */
export async function settleStarting(deps: StartSettlerDeps, row: MissionRow): Promise<'running' | 'failed' | 'unchanged'> {
  try {
    await deps.temporal.withDeadline(Date.now() + CALL_MS, async () => {
      if (row.idempotency_key !== null) await startMissionWorkflow(deps, row);
      await deps.temporal.workflow.getHandle(missionWorkflowId(row.id)).signal(admitSignal);
    });
  } catch (err) {
    if (isTemporalUnavailable(err)) return 'unchanged';
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const error = { phase: 'start', message: 'the mission never started: Temporal was unavailable when it was recorded' };
    const failed = await updateMissionIfStatus(deps.db, row.id, 'starting', {
      status: 'failed',
      error: JSON.stringify(error),
      finished_at: new Date(),
    });
    return failed ? 'failed' : 'unchanged';
  }
  await markRunning(deps, row.id);
  return 'running';
}

/** One round over the stale `starting` rows; a failed row frees its slot, so an admission pass follows. */
export async function settleStaleStarts(deps: StartSettlerDeps): Promise<{ running: number; failed: number }> {
  const counts = { running: 0, failed: 0 };
  for (const row of await staleStarting(deps.db, deps.config.admission.startSettleS / 2, ROUND_SIZE)) {
    const outcome = await settleStarting(deps, row).catch((err: unknown) => {
      deps.logger.warn('could not settle a starting mission', { missionId: row.id, err });
      return 'unchanged' as const;
    });
    if (outcome !== 'unchanged') counts[outcome]++;
  }
  if (counts.failed > 0 && hasRunningLimits(deps.config)) await dispatchQueued(deps);
  if (counts.running + counts.failed > 0) deps.logger.info('starting missions settled', counts);
  return counts;
}

/**
 * The background settler a worker process runs: every START_SETTLE_SECONDS / 2 a round settles the rows `starting`
 * for at least that long, so each is settled within START_SETTLE_SECONDS of becoming `starting` once Temporal answers,
 * whoever reads it or not. Every worker runs one; rounds are idempotent (one workflow id per mission, conditional
 * status moves), so two at once cost a duplicate signal at most. A tick while a round runs is skipped; `stop()` waits
 * for the round in progress.
 */
export function startSettler(deps: StartSettlerDeps): { stop(): Promise<void> } {
  let round: Promise<void> | undefined;
  const timer = setInterval(
    () => {
      round ??= settleStaleStarts(deps)
        .then(() => undefined)
        .catch((err: unknown) => deps.logger.warn('a start settler round failed', { err }))
        .finally(() => (round = undefined));
    },
    (deps.config.admission.startSettleS * 1000) / 2,
  );
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}
