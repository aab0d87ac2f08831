import { ApplicationFailure, CancellationScope, condition, log, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { storeOptions } from './activity-options.ts';
import {
  APPROVAL_NOT_PENDING,
  AWAITING_APPROVAL,
  type ApprovalOutcome,
  type ApprovalRecord,
  type ToolDecision,
  type ToolDecisionReply,
} from '../contracts/approvals.ts';
import { TOOL_CALL_FINISHED, TOOL_CALL_NOT_FOUND, type MissionPlan, type ToolUse } from '../contracts/mission.ts';
import type { EventLog } from './event-log.ts';

const store = proxyActivities<MissionActivities>(storeOptions);

/** What the wait for a decision gives the call: the input to run it with, or the text the model reads instead. */
export type ApprovalGate = { approved: true; input: Record<string, unknown>; recorded: Promise<void> } | { approved: false; text: string };

/**
 * The approvals of a mission's tool calls. A call whose tool needs approval waits (durably: a condition with a timer,
 * rebuilt on replay) until the `decideTool` update decides it or APPROVAL_TIMEOUT_S passes; the wait runs in the call's
 * own cancellation scope, so a cancel of the call or of the mission ends it at once.
 */
export function createApprovals(opts: {
  missionId: string;
  eventLog: EventLog;
  /** The approval wait of a session's runs before this one. */
  waitedBefore?: number;
}) {
  const { missionId, eventLog } = opts;
  // The decision of each waiting call, set by the update handler, read by the waiting condition.
  const decisions = new Map<string, ToolDecision | undefined>();
  const waiting = new Map<string, { tool: string; turn: number }>();
  // When each waiting call asked (workflow time).
  const requested = new Map<string, number>();
  let waitingSince = 0;
  let waitedMs = opts.waitedBefore ?? 0;

  /** Whole-workflow bookkeeping when a wait starts or ends: search attribute, current details, the wait metric. */
  function track(toolUseId: string, call?: { tool: string; turn: number }): void {
    const before = waiting.size;
    if (call) waiting.set(toolUseId, call);
    else waiting.delete(toolUseId);
    if (before === 0 && waiting.size > 0) {
      waitingSince = Date.now();
      eventLog.setStatus(AWAITING_APPROVAL);
    } else if (before > 0 && waiting.size === 0) {
      waitedMs += Date.now() - waitingSince;
      eventLog.setStatus('running');
    }
    const list = [...waiting].map(([id, c]) => `${c.tool} (${id})`);
    const turn = call?.turn ?? [...waiting.values()][0]?.turn;
    setCurrentDetails(
      list.length > 0
        ? `**turn ${turn}** · **awaiting approval**: ${list.join(', ')}`
        : `tool approvals decided · ${waitedMs} ms waited for approval so far`,
    );
  }

  // Not cancellable: how an approval ended must be recorded even while the mission is being cancelled.
  const record = (r: ApprovalRecord) =>
    CancellationScope.nonCancellable(() => store.recordApproval.executeWithOptions({ summary: `approval ${r.status} · ${r.tool}` }, [r]));

  /** The wait is over: the event log, the bookkeeping and the approval's row say how it ended. */
  function ended(
    call: ToolUse,
    tool: string,
    turn: number,
    outcome: ApprovalOutcome,
    extra: { reason?: string; editedInput?: Record<string, unknown>; deniedText?: string } = {},
  ): Promise<void> {
    const requestedAt = requested.get(call.id) ?? Date.now();
    requested.delete(call.id);
    decisions.delete(call.id);
    track(call.id);
    eventLog.approvalDecided(call.id, {
      decision: outcome,
      waitedMs: Date.now() - requestedAt,
      ...(extra.reason ? { reason: extra.reason } : {}),
      ...(extra.editedInput ? { edited: true } : {}),
    });
    return record({ missionId, turn, toolUseId: call.id, tool, status: outcome, decidedAt: new Date().toISOString(), ...extra });
  }

  return {
    /** Whether this call waits for a decision. */
    required: (spec: MissionPlan['tools'][number]): boolean => spec.approval === true,

    /** The call is listed as awaiting approval; synchronous, so a decision or cancel arriving next finds it. */
    request(call: ToolUse, tool: string, turn: number, timeoutS: number, embedId: string): void {
      const expiresAt = new Date(Date.now() + timeoutS * 1000).toISOString();
      eventLog.approvalRequested(call.id, tool, turn, call.input, expiresAt, embedId);
      decisions.set(call.id, undefined);
      requested.set(call.id, Date.now());
      track(call.id, { tool, turn });
    },

    /** Waits for the decision, inside the call's scope (a cancel rejects it with a cancellation). */
    async wait(call: ToolUse, tool: string, turn: number, seconds: number): Promise<ApprovalGate> {
      let decided: boolean;
      try {
        await record({
          missionId,
          turn,
          toolUseId: call.id,
          tool,
          status: 'pending',
          input: call.input,
          requestedAt: new Date(requested.get(call.id)!).toISOString(),
          expiresAt: new Date(requested.get(call.id)! + seconds * 1000).toISOString(),
        });
        decided = await condition(() => decisions.get(call.id) !== undefined, seconds * 1000);
      } catch (err) {
        // Cancelled while waiting (the call or the mission): recorded, then the cancellation goes on up.
        await ended(call, tool, turn, 'cancelled');
        throw err;
      }
      const decision = decisions.get(call.id);
      if (!decided || !decision) {
        const text = `denied: no one approved this call within ${seconds} s; do not retry it, carry on without it`;
        await ended(call, tool, turn, 'timed_out', { deniedText: text });
        return { approved: false, text };
      }
      if (decision.decision === 'deny') {
        const text = `denied by the user: ${decision.reason ?? 'no reason given'}`;
        await ended(call, tool, turn, 'denied', { deniedText: text, ...(decision.reason ? { reason: decision.reason } : {}) });
        return { approved: false, text };
      }
      // Recorded while the tool runs: the approval row is an audit record, the tool need not wait for it.
      const recorded = ended(call, tool, turn, 'approved', decision.input ? { editedInput: decision.input } : {}).catch((err: unknown) =>
        log.warn('could not record an approval', { toolUseId: call.id, err: String(err) }),
      );
      return { approved: true, input: decision.input ?? call.input, recorded };
    },

    /** The update's validator: refuses, writing no history, a call that is unknown, over, or not waiting for a decision. */
    validateDecision(toolUseId: string, decision: ToolDecision): void {
      const status = eventLog.toolStatus(toolUseId);
      if (status === undefined) throw ApplicationFailure.create({ type: TOOL_CALL_NOT_FOUND, message: `no tool call ${toolUseId}` });
      if (status !== 'awaiting_approval' && status !== 'running')
        throw ApplicationFailure.create({ type: TOOL_CALL_FINISHED, message: `tool call already ${status}` });
      // Decided already (this activation, or the wait just ended and its call has yet to end): one decision per call.
      if (status === 'running' || !waiting.has(toolUseId) || decisions.get(toolUseId) !== undefined)
        throw ApplicationFailure.create({ type: APPROVAL_NOT_PENDING, message: `tool call ${toolUseId} is not awaiting approval` });
      if (decision.decision !== 'approve' && decision.decision !== 'deny')
        throw ApplicationFailure.create({ type: 'InvalidDecision', message: 'decision must be approve or deny' });
    },

    decide(toolUseId: string, decision: ToolDecision): ToolDecisionReply {
      decisions.set(toolUseId, decision);
      return { toolUseId, decision: decision.decision === 'approve' ? 'approved' : 'denied' };
    },

    /** Of the mission's elapsed time, how long at least one call waited for approval (a wait still open counts too). */
    waitMs: (): number => waitedMs + (waiting.size > 0 ? Date.now() - waitingSince : 0),
  };
}
export type Approvals = ReturnType<typeof createApprovals>;
