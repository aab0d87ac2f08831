import { defineUpdate } from '@temporalio/workflow';

/** Tool approvals: a call whose tool needs approval waits, durably, for a person's decision. */

/** A person's decision on a waiting call; an edited `input` replaces the model's (the API checks it against the schema). */
export type ToolDecision = { decision: 'approve' | 'deny'; input?: Record<string, unknown>; reason?: string };
/** How an approval ended: decided by the person, no decision within APPROVAL_TIMEOUT_S, or the call or mission cancelled. */
export type ApprovalOutcome = 'approved' | 'denied' | 'timed_out' | 'cancelled';
export type ToolDecisionReply = { toolUseId: string; decision: 'approved' | 'denied' };
/** Why a decision is refused: the call is known but waits for no decision (decided already, or needs none). */
export const APPROVAL_NOT_PENDING = 'ApprovalNotPending';
/**
 * Decides a call that awaits approval. The validator refuses an unknown call (TOOL_CALL_NOT_FOUND), a finished one
 * (TOOL_CALL_FINISHED) or one that waits for no decision (APPROVAL_NOT_PENDING) atomically, writing no history.
 */
export const decideToolUpdate = defineUpdate<ToolDecisionReply, [toolUseId: string, decision: ToolDecision]>('decideTool');
/** The search attribute value (CadenzaStatus) while at least one call waits for approval; `running` again after. */
export const AWAITING_APPROVAL = 'awaiting_approval';
/** What the recordApproval activity writes: the request (`pending`) or how it ended, with the model's text when denied. */
export type ApprovalRecord = {
  missionId: string;
  turn: number;
  toolUseId: string;
  tool: string;
} & (
  | { status: 'pending'; input: Record<string, unknown>; requestedAt: string; expiresAt: string }
  | { status: ApprovalOutcome; decidedAt: string; reason?: string; editedInput?: Record<string, unknown>; deniedText?: string }
);
