import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config/config.ts';
import { heldSlots, lockAdmission, lockUserStarts, markAdmitted, queuedHeads, recentStarts } from '../db/admission.ts';
import { getMission, insertMissionOnce, updateMissionIfStatus } from '../db/missions.ts';
import type { Database, MissionRow, NewMission } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';
import { admitSignal, missionWorkflowId } from '../contracts/mission.ts';
import { pickAdmissions } from './fair-order.ts';
import { markRunning } from './mission-start.ts';

/** What admission reads and wakes: the API and every worker process pass their own. */
export type AdmissionDeps = {
  db: Kysely<Database>;
  temporal: Client;
  config: Pick<Config, 'admission'>;
  logger: Logger;
};

/** The window of MAX_STARTS_PER_MINUTE_PER_USER. */
const START_WINDOW_S = 60;

/** True when a running-mission limit is set: missions are then recorded `queued` and admitted by a pass. */
export const hasRunningLimits = (config: Pick<Config, 'admission'>): boolean =>
  config.admission.perUser !== undefined || config.admission.perTenant !== undefined;

/** A user's starts in the last minute reached MAX_STARTS_PER_MINUTE_PER_USER; `retryAfterS` until one leaves the window. */
export class StartRateExceeded extends Error {
  readonly retryAfterS: number;
  constructor(limit: number, retryAfterS: number) {
    super(`more than ${limit} mission starts in a minute; retry in ${retryAfterS} s`);
    this.name = 'StartRateExceeded';
    this.retryAfterS = retryAfterS;
  }
}

/**
 * Inserts a new mission under the fair limits: refused with StartRateExceeded beyond the start rate (counted from
 * Postgres under a per-user lock, so two API processes cannot both let the last start through), recorded `queued`
 * when running limits are set (the next admission pass decides whether it starts now).
 */
export async function insertUnderLimits(
  deps: Pick<AdmissionDeps, 'db' | 'config'>,
  mission: NewMission,
): Promise<{ row: MissionRow; created: boolean }> {
  // Without a start rate there is no lock to hold: the insert alone is one statement, not three (BEGIN, COMMIT).
  if (deps.config.admission.startsPerMinutePerUser === undefined) return insertMissionOnce(deps.db, startRow(deps.config, mission));
  return deps.db.transaction().execute((trx) => insertStart(trx, deps.config, mission));
}

/**
 * Inserts a start (a new mission or a retry) inside the caller's transaction: the start rate checked under the user's
 * lock, and `queued` under running limits. Throws StartRateExceeded beyond MAX_STARTS_PER_MINUTE_PER_USER, so the
 * transaction writes nothing.
 */
export async function insertStart(
  trx: Transaction<Database>,
  config: Pick<Config, 'admission'>,
  mission: NewMission,
): Promise<{ row: MissionRow; created: boolean }> {
  const rate = config.admission.startsPerMinutePerUser;
  if (rate !== undefined) {
    const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
    await lockUserStarts(trx, owner);
    const starts = await recentStarts(trx, owner, START_WINDOW_S);
    if (starts.count >= rate) throw new StartRateExceeded(rate, Math.max(1, Math.ceil(starts.freeInMs / 1000)));
  }
  return insertMissionOnce(trx, startRow(config, mission));
}

/** The row as inserted: `queued` under running limits (the admission pass decides), else as given. */
const startRow = (config: Pick<Config, 'admission'>, mission: NewMission): NewMission => ({
  ...mission,
  status: hasRunningLimits(config) ? 'queued' : mission.status,
});

/**
 * One admission pass: under a lock every process shares, the queued missions that fit the limits move to `starting`
 * (their slot is taken), in the fair order of pickAdmissions. Returns them in that order; wake them with `wakeAdmitted`.
 */
export async function admitQueued(deps: Pick<AdmissionDeps, 'db' | 'config'>): Promise<string[]> {
  if (!hasRunningLimits(deps.config)) return [];
  const limits = { perUser: deps.config.admission.perUser, perTenant: deps.config.admission.perTenant };
  const deepest = Math.min(limits.perUser ?? Infinity, limits.perTenant ?? Infinity);
  return deps.db.transaction().execute(async (trx) => {
    await lockAdmission(trx);
    const picked = pickAdmissions(await heldSlots(trx), await queuedHeads(trx, deepest), limits);
    const moved = new Set(await markAdmitted(trx, picked));
    return picked.filter((id) => moved.has(id));
  });
}

/**
 * Signals each admitted mission's waiting workflow, in order, and marks it `running`. A workflow not started yet is
 * left to the API request that records it (it signals once its start is done) or, when that request failed, to the
 * start settler; while Temporal is unavailable the mission stays `starting` and its workflow finds the slot on its own
 * next check.
 */
export async function wakeAdmitted(deps: AdmissionDeps, ids: string[]): Promise<void> {
  for (const id of ids) {
    try {
      await deps.temporal.workflow.getHandle(missionWorkflowId(id)).signal(admitSignal);
      await markRunning(deps, id);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) continue;
      if (!isTemporalUnavailable(err)) throw err;
      deps.logger.warn('could not wake an admitted mission: its workflow will find its slot on its next check', { missionId: id, err });
    }
  }
}

/** A pass and the wake-up of whatever it admitted: run whenever a slot may have freed. */
export async function dispatchQueued(deps: AdmissionDeps): Promise<string[]> {
  const ids = await admitQueued(deps);
  await wakeAdmitted(deps, ids);
  return ids;
}

/** The activities of missions that wait for a slot: a queued mission's own check, and a session a message wakes. */
export function createAdmissionActivities(deps: AdmissionDeps) {
  /** A pass, then whether the mission's own slot is there. */
  const admitMission = async (input: { missionId: string }): Promise<boolean> => {
    await dispatchQueued(deps);
    const row = await getMission(deps.db, input.missionId);
    // Admitted but not woken (the signal could not be sent): this workflow goes on, so the row says it runs.
    if (row.status === 'starting') await updateMissionIfStatus(deps.db, row.id, 'starting', { status: 'running' });
    return row.status !== 'queued';
  };
  return {
    /** A queued workflow's check when no wake-up came for a while. */
    admitMission,
    /**
     * A mission that held no slot (an idle session a message woke, a mission paused at its budget) goes on and needs
     * one again: `running` at once without running limits; with them `queued`, and a pass decides as for a new
     * mission. True when it holds its slot now; false, it waits for the admit signal like any queued mission. A
     * retried attempt finds the row where the first left it.
     */
    async retakeSlot(input: { missionId: string; from: 'idle' | 'paused' }): Promise<boolean> {
      const next = hasRunningLimits(deps.config) ? 'queued' : 'running';
      await updateMissionIfStatus(deps.db, input.missionId, input.from, { status: next });
      return next === 'running' || admitMission(input);
    },
  };
}
