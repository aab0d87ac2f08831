import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate, type Sinks } from '@temporalio/workflow';
import type { EmbedStatus, EmbedSummary } from '../contracts/embeds.ts';
import type { StopReason, Tier } from '../contracts/model.ts';
import type { FactoryStop } from '../contracts/script-factory.ts';

export type { Tier };

/** The one contract between the API, the worker and the workflow: names, inputs, messages and progress events. */

export const MISSION_WORKFLOW = 'missionWorkflow';
export const missionWorkflowId = (missionId: string): string => `mission-${missionId}`;

export const SkillSearchAttribute = defineSearchAttributeKey('CadenzaSkill', SearchAttributeType.KEYWORD);
export const UserSearchAttribute = defineSearchAttributeKey('CadenzaUser', SearchAttributeType.KEYWORD);
export const StatusSearchAttribute = defineSearchAttributeKey('CadenzaStatus', SearchAttributeType.KEYWORD);
/** On a retried mission: the id of the mission it retries. */
export const RetryOfSearchAttribute = defineSearchAttributeKey('CadenzaRetryOf', SearchAttributeType.KEYWORD);
/** The version of the mission's main skill, as text (`3`): with CadenzaSkill, every run of one version. */
export const SkillVersionSearchAttribute = defineSearchAttributeKey('CadenzaSkillVersion', SearchAttributeType.KEYWORD);
/** Registered on every dev server this project starts (`--search-attribute NAME=Keyword`). */
export const SEARCH_ATTRIBUTE_NAMES = ['CadenzaSkill', 'CadenzaUser', 'CadenzaStatus', 'CadenzaRetryOf', 'CadenzaSkillVersion'] as const;

/** The failure type of an activity that gave up waiting for an unreachable database; the mission then fails in phase `database`. */
export const DATABASE_UNAVAILABLE = 'DatabaseUnavailable';

/** `queued`: started over a running-mission limit, waiting for a slot (MAX_RUNNING_MISSIONS_PER_USER/_PER_TENANT). */
export type MissionStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
/** `awaiting_approval`: the call waits for a person's decision; `denied`: refused by the person, or no decision in time. */
export type ToolStatus = 'running' | 'awaiting_approval' | 'completed' | 'error' | 'cancelled' | 'denied';
/** How a tool call ended. */
export type ToolEndStatus = Exclude<ToolStatus, 'running' | 'awaiting_approval'>;

/** Workflow input: ids only; the skill body, transcript and tool catalog live in Postgres. */
export type MissionInput = {
  missionId: string;
  /** Task queue of the model activities (a worker with MODEL_CONCURRENCY slots serves it). */
  modelTaskQueue: string;
  /**
   * Task queue of the tool calls (a worker with TOOL_CONCURRENCY slots serves it). Absent in recorded histories and
   * older starts: tools then run on the workflow's own queue.
   */
  toolTaskQueue?: string;
  /**
   * Started over a running-mission limit: the workflow waits for its slot (`admitSignal`, or its own periodic
   * `admitMission` check) before it prepares. Absent, it starts at once, with the commands of every recorded history.
   */
  queued?: boolean;
  /** A retry: where the loop goes on. Absent, the mission starts at turn 1 (the commands are those of every history). */
  resume?: MissionResume;
};

/**
 * Where a retried mission goes on: the turns before `turn` were carried over from mission `retryOf` (their transcript
 * rows and tool outputs copied, never re-run), `previous` are the outcomes of turn `turn - 1`'s tools (empty when that
 * turn's tool results message was carried over too), and `spent` is what the carried turns cost, counted by budgets.
 */
export type MissionResume = {
  retryOf: string;
  turn: number;
  previous: ToolOutcome[];
  spent: { toolCalls: number; inputTokens: number; outputTokens: number; costUsd: number };
};

/** The frozen plan prepareMission returns: what the loop needs, small enough for history. */
export type MissionPlan = {
  tier: Tier;
  maxTurns: number;
  /** Token and cost budgets; absent in the recorded history test/fixtures/histories/mission-parallel-cancel.pb. */
  budget?: MissionBudget;
  tools: Array<{ modelName: string; qualifiedName: string; timeoutS: number; retries: number; approval?: boolean }>;
  /** APPROVAL_TIMEOUT_S when the plan was made: how long a call that needs approval waits before it counts as denied. */
  approvalTimeoutS?: number;
};

/** Hard limits on a mission's model usage; the workflow checks its running totals against them after each call. */
export type MissionBudget = { maxTokens?: number; maxCostUsd?: number };

export type ToolUse = { id: string; name: string; input: Record<string, unknown> };

/** What the workflow knows of a finished tool call; the output itself stays in Postgres. */
export type ToolOutcome = { toolUseId: string; status: ToolEndStatus; error?: string };

export type ModelTurnInput = {
  missionId: string;
  turn: number;
  tier: Tier;
  /** Outcomes of the previous turn's tools, in the model's order; the activity turns them into tool results. */
  previous: ToolOutcome[];
  /** The forced final call: no tools offered, an instruction to answer now. */
  final: boolean;
  /** Why the final call is forced (the instruction says so); the turn budget when absent. */
  finalReason?: 'turn_budget' | 'budget';
};

export type ModelTurnResult = {
  stopReason: StopReason;
  toolUses: ToolUse[];
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** The model id the tier resolved to for this call, and the call's cost from MODEL_PRICES (0 when unpriced). */
  model?: string;
  /** Absent in the recorded history test/fixtures/histories/mission-parallel-cancel.pb. */
  costUsd?: number;
};

/** One tool call: `retries` is the tool's own (app.yml) budget for failed tries; worker deaths do not spend it. */
export type ToolCallInput = {
  missionId: string;
  turn: number;
  toolUse: ToolUse;
  qualifiedName: string;
  timeoutS: number;
  retries: number;
  /** The invocation's embed id, unique across missions; absent in calls scheduled before embeds (patch `tool-embeds`). */
  embedId?: string;
};
/** `embed`: counts of what the call's embed holds (never its content, which stays in Postgres). */
export type ToolCallResult = { status: 'completed' | 'error'; durationMs: number; error?: string; embed?: EmbedSummary };

/** A tool call the workflow ended without its activity reporting it (cancelled, failed, never run): its feed rows. */
export type ToolCallEnd = {
  toolUseId: string;
  tool: string;
  turn: number;
  status: ToolEndStatus;
  durationMs: number;
  error?: string;
  /** Its embed, ended with the same status. */
  embedId?: string;
};

export type MissionMetrics = {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  elapsedMs: number;
  /** USD, from MODEL_PRICES; calls of unpriced models count 0. */
  costUsd: number;
  /** Of `elapsedMs`, the time at least one tool call waited for a person's approval (absent: none waited). */
  approvalWaitMs?: number;
};
/** `budget`: the token or cost budget ended the mission with a forced final call. */
export type MissionResult = {
  text: string;
  /** The canvas specs the mission's tool results carried, in order (`GET /canvases/:id`). */
  canvasSpecIds: string[];
  /** What the tools suggested the caller could ask next (`suggestions_follow_up_requests`), in order, without repeats. */
  followUps?: string[];
  metrics: MissionMetrics;
  stoppedBy: 'answer' | 'turn_budget' | 'max_tokens' | 'budget';
};

/** One progress event; `seq` is dense from 1 and is the SSE id. */
export type MissionEvent = { seq: number; at: string } & (
  | { type: 'status'; status: MissionStatus; resumed?: { retryOf: string; turn: number } }
  | { type: 'turn'; turn: number }
  | { type: 'tool_start'; toolUseId: string; tool: string; turn: number }
  | { type: 'tool_end'; toolUseId: string; tool: string; status: ToolEndStatus; durationMs: number; error?: string }
  | { type: 'approval_requested'; toolUseId: string; tool: string; turn: number; input: Record<string, unknown>; expiresAt: string }
  | {
      type: 'approval_decided';
      toolUseId: string;
      tool: string;
      decision: ApprovalOutcome;
      waitedMs: number;
      reason?: string;
      edited?: boolean;
    }
  | { type: 'error'; phase: string; message: string }
  | ({ type: 'tool_attempt' } & FactoryProgress)
  | { type: 'embed'; embedId: string; toolUseId: string; tool: string; status: EmbedStatus; summary?: EmbedSummary }
);
export type MissionEventBody = MissionEvent extends infer E ? (E extends unknown ? Omit<E, 'seq' | 'at'> : never) : never;

/**
 * Live events: transient progress that never enters workflow history (streamed model text, a tool's own progress
 * reports). Published by activities, relayed to SSE clients as they happen; a stream resumed later does not replay them.
 */
export type LiveEvent =
  | { type: 'text_delta'; turn: number; text: string }
  | { type: 'reset'; turn: number }
  | { type: 'tool_progress'; toolUseId: string; progress: number; total?: number; message?: string };
/** Where activities publish live events (fire and forget: a lost live event loses no state). */
export type LivePublisher = { publish(missionId: string, event: LiveEvent): void };

export type EventsPage = { events: MissionEvent[]; done: boolean };

/**
 * Worker-side calls of the workflow, outside history and skipped on replay: `progress.changed(lastSeq)` after the
 * workflow emitted events up to `lastSeq`, so the worker wakes the API's relay (which then asks the events query, still
 * the only record, unless it has read that far already).
 */
export interface MissionSinks extends Sinks {
  /**
   * The workflow logged `event`; `digest` is the events cursor's after it (workflows/events-cursor.ts); `ended`: it was
   * the terminal event (the mission's final events are stored).
   */
  progress: {
    changed(event: MissionEvent, digest: string, ended: boolean): void;
    /** An activity was scheduled with the events cursor at `upTo` in its header: its start will claim those events. */
    claimed(upTo: number): void;
  };
}

/** Live state for `GET /missions/:id`. */
export type MissionState = {
  status: MissionStatus;
  turn: number;
  tools: Array<{ toolUseId: string; name: string; status: ToolStatus; durationMs?: number; embedId?: string }>;
  result?: MissionResult;
  error?: { phase: string; message: string };
};

/** What an accepted tool cancel answers; the call's `tool_end` follows on the event log. */
export type ToolCancelReply = { toolUseId: string; embedId?: string; status: 'cancelling' };
/** Why a tool cancel is refused (the failure type of the rejected update). */
export const TOOL_CALL_NOT_FOUND = 'ToolCallNotFound';
export const TOOL_CALL_FINISHED = 'ToolCallFinished';

/**
 * Cancels one running tool call. The validator refuses an unknown or finished call inside the workflow, atomically
 * with the cancel, and a refused update writes no history.
 */
export const cancelToolUpdate = defineUpdate<ToolCancelReply, [toolUseIdOrEmbedId: string]>('cancelTool');
/** The signal the API sent before the update; its handler stays so recorded histories replay. */
export const cancelToolSignal = defineSignal<[toolUseId: string]>('cancelTool');
/** A queued mission's slot is free (sent by the admission pass that gave it the slot); repeats change nothing. */
export const admitSignal = defineSignal('admit');
/** The activity a queued mission runs when no wake-up came for a while: an admission pass; true once its slot is there. */
export type AdmissionActivities = { admitMission(input: { missionId: string }): Promise<boolean> };
export const eventsQuery = defineQuery<EventsPage, [afterSeq: number]>('events');
export const stateQuery = defineQuery<MissionState>('state');

// ——— The script factory (create_script): a child workflow per call, its input and result, its progress signal ———

export const SCRIPT_FACTORY_WORKFLOW = 'scriptFactoryWorkflow';
/** The child workflow of one create_script call (a tool-use id is unique within its turn). */
export const scriptFactoryWorkflowId = (missionId: string, turn: number, toolUseId: string): string =>
  `mission-${missionId}-factory-${turn}-${toolUseId}`;

/** Ids only: the factory's activities read the call's input from the mission's transcript. */
export type ScriptFactoryInput = {
  missionId: string;
  turn: number;
  toolUseId: string;
  modelTaskQueue: string;
  /** The call's embed, which the factory starts and ends (absent for a mission recorded before embeds). */
  embedId?: string;
};

/** What the factory settles once, before its first attempt. */
export type FactoryPlan = {
  skill: string;
  script: string;
  /** The script's path in the bundle (`scripts/<name>.py` or `.mjs`). */
  path: string;
  runtime: 'python' | 'node';
  tier: Tier;
  maxAttempts: number;
  /** How long one sandboxed run may take (SCRIPT_TIMEOUT_S and a margin). */
  runTimeoutS: number;
};
/** What the preparation answers: the plan, or the problem with the request (returned to the model). */
export type FactoryPreparation = { ok: true; plan: FactoryPlan } | { ok: false; error: string };

/** One attempt's script, as the model wrote it (the source stays in the factory's history, capped in size). */
export type FactoryScript = { ok: true; source: string; durationMs: number } | { ok: false; error: string; durationMs: number };
/** One sandboxed run on the sample with the postconditions checked; `errorKey` is the error normalised for comparison. */
export type FactoryRun = { ok: true; durationMs: number } | { ok: false; error: string; errorKey: string; durationMs: number };

/** One attempt as the record keeps it. */
export type FactoryAttempt = { attempt: number; passed: boolean; error?: string; modelMs: number; runMs: number };
/** The factory's end, handed to its last activity; `source` only when it converged. */
export type FactoryOutcome = {
  stoppedBy: FactoryStop | 'invalid';
  attempts: FactoryAttempt[];
  maxAttempts: number;
  source?: string;
  error?: string;
};

/** The child sends the parent one per attempt; the parent logs it as a `tool_attempt` event (durable, replayed). */
export type FactoryProgress = { toolUseId: string; progress: number; total: number; message: string };
export const factoryProgressSignal = defineSignal<[FactoryProgress]>('factoryProgress');

// ── Tool approvals: a call whose tool needs approval waits, durably, for a person's decision ──

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
