import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { missionWorkflowId } from '../contracts/mission.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';

/**
 * In an activity: returns once the mission's workflow has closed, however it ended (failed, cancelled, never started);
 * an outage is thrown for the retry policy. Heartbeats every `beatMs` meanwhile, so a dead worker is seen and a cancel
 * reaches it.
 */
export async function awaitMissionEnd(temporal: Client, missionId: string, beatMs: number): Promise<void> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), beatMs);
  try {
    const ended = temporal.workflow
      .getHandle(missionWorkflowId(missionId))
      .result()
      .then(
        () => undefined,
        (err: unknown) => {
          if (isTemporalUnavailable(err)) throw err;
        },
      );
    await Promise.race([ended, ctx.cancelled]);
  } finally {
    clearInterval(beat);
  }
}
