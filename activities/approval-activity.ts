import { Context } from '@temporalio/activity';
import { endApproval, insertApprovalRequest } from '../db/tool-approvals.ts';
import { putToolCall } from '../db/transcript.ts';
import type { ApprovalRecord } from '../contracts/approvals.ts';
import type { ActivityDeps } from './deps.ts';

/** The approval activity: the workflow's record of a call that needed approval, from request to decision. */
export function createApprovalActivity(deps: Pick<ActivityDeps, 'db'>) {
  const { db } = deps;
  return {
    /**
     * Writes the request (`pending`, listed by `GET /approvals`) or how it ended. A denied or timed-out call's tool
     * output is the denial text, stored like every tool output, so the model reads it as this call's result.
     */
    async recordApproval(r: ApprovalRecord): Promise<void> {
      const call = { missionId: r.missionId, turn: r.turn, toolUseId: r.toolUseId };
      if (r.status === 'pending')
        return insertApprovalRequest(db, { ...call, tool: r.tool, input: r.input, requestedAt: r.requestedAt, expiresAt: r.expiresAt });
      await db.transaction().execute(async (trx) => {
        await endApproval(trx, call, { status: r.status, decidedAt: r.decidedAt, reason: r.reason, editedInput: r.editedInput });
        if (r.deniedText === undefined) return;
        await putToolCall(trx, {
          ...call,
          tool: r.tool,
          status: 'denied',
          output: r.deniedText,
          durationMs: 0,
          attempt: Context.current().info.attempt,
          attemptScheduledMs: Context.current().info.currentAttemptScheduledTimestampMs,
        });
      });
    },
  };
}
