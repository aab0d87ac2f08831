import { condition, proxyActivities } from '@temporalio/workflow';
import { storeOptions } from './activity-options.ts';
import type { AdmissionActivities } from '../contracts/activities.ts';

const { admitMission, retakeSlot: retakeSlotActivity } = proxyActivities<AdmissionActivities>(storeOptions);

/**
 * How long a queued mission waits for its wake-up before it checks for a slot itself. The admit signal is the fast
 * path; this check makes a lost signal (a process that died between freeing a slot and sending it) cost at most this.
 */
const RECHECK = '60s';

/** The admit signal's mark: set by the signal handler, cleared before each wait that needs a fresh one. */
export type Admission = { admitted: boolean };

/** Waits until the mission holds a slot: the admit signal, or a periodic check of its own. */
export async function waitForAdmission(missionId: string, admission: Admission): Promise<void> {
  while (!admission.admitted) {
    if (await condition(() => admission.admitted, RECHECK)) break;
    if (await admitMission.executeWithOptions({ summary: 'check for a free slot' }, [{ missionId }])) break;
  }
}

/**
 * A mission that held no slot takes one again (admission counts running missions, not idle sessions or paused
 * ones): at once when one is free, else `queued` (`onQueued` says so) until admitted. Returns once the slot is held.
 */
export async function retakeSlot(missionId: string, from: 'idle' | 'paused', admission: Admission, onQueued: () => void): Promise<void> {
  admission.admitted = false;
  if (await retakeSlotActivity.executeWithOptions({ summary: 'take a slot again' }, [{ missionId, from }])) return;
  onQueued();
  await waitForAdmission(missionId, admission);
}
