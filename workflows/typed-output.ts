import { ApplicationFailure } from '@temporalio/workflow';
import { OUTPUT_INVALID, type MissionPlan, type ModelTurnResult } from '../contracts/mission.ts';
import type { EventLog } from './event-log.ts';
import type { createModelTurns } from './model-turns.ts';

/** What the model is told when its answer missed the output schema: the errors, as the activity's check found them. */
export const outputCorrection = (errors: string): string =>
  `Your answer does not match the required output schema: ${errors}. Answer again with only the corrected JSON value.`;

/**
 * A typed mission's answer (the model activity checked it against the output schema): one that misses is sent back
 * once, with the errors, in a forced final call of its own (a turn, counted in the budgets like any call); a second
 * miss fails the mission in phase `output`. An untyped mission's answer, or a matching one, passes as it is.
 */
export function createTypedOutput(opts: { model: ReturnType<typeof createModelTurns>; eventLog: EventLog }) {
  return async function typed(plan: MissionPlan, reply: ModelTurnResult, turn: number): Promise<ModelTurnResult> {
    if (!reply.output || reply.output.ok) return reply;
    opts.eventLog.emit({ type: 'output_rejected', turn, errors: reply.output.errors, retried: true });
    const again = await opts.model.final(plan, turn + 1, [], 'output', outputCorrection(reply.output.errors));
    if (!again.output || again.output.ok) return again;
    opts.eventLog.emit({ type: 'output_rejected', turn: turn + 1, errors: again.output.errors, retried: false });
    throw ApplicationFailure.nonRetryable(`the answer does not match the output schema: ${again.output.errors}`, OUTPUT_INVALID);
  };
}
