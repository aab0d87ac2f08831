import { proxyActivities, sleep } from '@temporalio/workflow';
import type { AdmissionActivities } from '../contracts/activities.ts';
import type { ProviderTurnInput } from '../contracts/mission.ts';
import { storeOptions } from './activity-options.ts';

const { reserveModelCall } = proxyActivities<AdmissionActivities>(storeOptions);

/**
 * Waits for a model call's turn at its target's PROVIDER_LIMITS and returns its reservation: each refusal is a durable
 * timer for the time the bucket needs (no activity slot held, nothing polled meanwhile), then the call asks again and
 * keeps its place in line. `waiting` is told once, on the first refusal (the event).
 */
export async function takeProviderTurn(
  input: ProviderTurnInput,
  waiting: (w: { target: string; waitMs: number }) => void,
): Promise<string | undefined> {
  for (let told = false; ; told = true) {
    const turn = await reserveModelCall.executeWithOptions({ summary: `provider turn · ${input.callId}` }, [input]);
    if (turn.granted) return turn.reservation;
    if (!told) waiting({ target: turn.target, waitMs: turn.waitMs });
    await sleep(turn.waitMs);
  }
}
