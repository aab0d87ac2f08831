import { evalRunWorkflowId } from '../contracts/evals.ts';
import { missionWorkflowId } from '../contracts/mission.ts';

const MISSION = 'mission-';
const EVAL_RUN = evalRunWorkflowId('');

/**
 * The workflows whose event log the relay streams, each named on the events channel and in the relay by a stream id:
 * a mission's is its mission id (as the channel has always carried it), an eval run's is its workflow id
 * (`eval-run-<id>`), which no mission id can be (those are UUIDs).
 */
export const evalRunStreamId = evalRunWorkflowId;

/** The stream of a workflow; undefined for workflows that log no events (schedules, webhooks). */
export function streamIdOf(workflowId: string): string | undefined {
  if (workflowId.startsWith(MISSION)) return workflowId.slice(MISSION.length);
  if (workflowId.startsWith(EVAL_RUN)) return workflowId;
  return undefined;
}

/** The workflow a stream reads. */
export const workflowIdOf = (streamId: string): string => (streamId.startsWith(EVAL_RUN) ? streamId : missionWorkflowId(streamId));
