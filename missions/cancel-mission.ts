import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { missionWorkflowId } from '../contracts/mission.ts';
import { ConflictError } from '../contracts/errors.ts';
import { updateMissionIfStatus } from '../db/missions.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { EVERY_CALL, type ToolCancels } from '../notify/tool-cancels.ts';

/**
 * Cancels a mission that has not ended: its workflow's cancellation (the workflow records the end), or, for one whose
 * start never reached Temporal, the row itself, so a retry will not start it. `cancelling` or `cancelled` as done.
 * Once Temporal has the request, its running calls are told at once (`toolCancels`): they stop now and fetch their
 * cancellation, rather than at their next heartbeat (up to 2 s).
 */
export async function cancelMission(
  deps: { db: Kysely<Database>; temporal: Client; toolCancels?: ToolCancels },
  row: MissionRow,
): Promise<'cancelling' | 'cancelled'> {
  if (!['queued', 'starting', 'running', 'idle', 'paused'].includes(row.status))
    throw new ConflictError(`mission is already ${row.status}`);
  try {
    await deps.temporal.workflow.getHandle(missionWorkflowId(row.id)).cancel();
    void deps.toolCancels?.announce(row.id, EVERY_CALL);
    return 'cancelling';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const cancelled =
      (row.status === 'starting' || row.status === 'queued') &&
      (await updateMissionIfStatus(deps.db, row.id, row.status, { status: 'cancelled', finished_at: new Date() }));
    if (cancelled) return 'cancelled';
    throw new ConflictError('mission has already finished');
  }
}
