import { condition, proxyActivities } from '@temporalio/workflow';
import { storeOptions } from './activity-options.ts';
import type { AdmissionActivities } from '../contracts/activities.ts';

const { admitMission } = proxyActivities<AdmissionActivities>(storeOptions);

/**
 * How long a queued mission waits for its wake-up before it checks for a slot itself. The admit signal is the fast
 * path; this check makes a lost signal (a process that died between freeing a slot and sending it) cost at most this.
 */
const RECHECK = '60s';

/** Waits until the mission holds a slot: the admit signal, or a periodic check of its own. */
export async function waitForAdmission(missionId: string, admitted: () => boolean): Promise<void> {
  while (!admitted()) {
    if (await condition(admitted, RECHECK)) break;
    if (await admitMission.executeWithOptions({ summary: 'check for a free slot' }, [{ missionId }])) break;
  }
}
