import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { EmbedSummary } from './embeds.ts';
import type { QueuedMessage } from './messages.ts';
import type { FallbackReason, StopReason, Tier } from './model.ts';
import { DELEGATE } from './delegation.ts';
import { CREATE_SCRIPT } from './script-factory.ts';

export type { Tier };

/**
 * The mission workflow's contract with the API and the worker: its name and id, input and result, statuses, the
 * state query and the messages it takes. Definitions only: `define*` make plain name objects, safe to import anywhere.
 */

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
export const SEARCH_ATTRIBUTE_NAMES = [
  'CadenzaSkill',
  'CadenzaUser',
  'CadenzaStatus',
  'CadenzaRetryOf',
  'CadenzaSkillVersion',
  // On a mission a schedule started (contracts/schedules.ts).
  'CadenzaSchedule',
] as const;

/** The failure type of an activity that gave up waiting for an unreachable database; the mission then fails in phase `database`. */
export const DATABASE_UNAVAILABLE = 'DatabaseUnavailable';

/**
 * `queued`: started over a running-mission limit, waiting for a slot (MAX_RUNNING_MISSIONS_PER_USER/_PER_TENANT);
 * `idle`: a session that answered, waiting for the next message (it holds no slot).
 */
export type MissionStatus = 'queued' | 'running' | 'idle' | 'paused' | 'completed' | 'failed' | 'cancelled';
/** A status the mission ends with. */
export type MissionEndStatus = Exclude<MissionStatus, 'running' | 'queued' | 'idle' | 'paused'>;
/** `awaiting_approval`: the call waits for a person's decision; `denied`: refused by the person, or no decision in time. */
export type ToolStatus = 'running' | 'awaiting_approval' | 'completed' | 'error' | 'cancelled' | 'denied';
/** How a tool call ended. */
export type ToolEndStatus = Exclude<ToolStatus, 'running' | 'awaiting_approval'>;

/**
 * The step a mission failed in: `start` (never started: Temporal unavailable), `queued`, `prepare`, `model`, `tool`,
 * `complete`, `output` when the answer did not match the mission's output schema after its one correction, or
 * `database` when the database stayed unreachable, whichever step was running.
 */
export type MissionPhase = 'start' | 'queued' | 'prepare' | 'model' | 'tool' | 'output' | 'complete' | 'database';
/** The failure type of a mission whose answer missed its output schema twice; it fails in phase `output`. */
export const OUTPUT_INVALID = 'OutputInvalid';

/** Why a mission failed or was cancelled, as its state, its row and its `error` event say. */
export type MissionError = { phase: MissionPhase; message: string };

/** Workflow input: ids only; the skill body, transcript and tool catalog live in Postgres. */
export type MissionInput = {
  missionId: string;
  /** Task queue of the model activities (a worker with MODEL_CONCURRENCY slots serves it). */
  modelTaskQueue: string;
  /** Task queue of the tool calls (a worker with TOOL_CONCURRENCY slots serves it). */
  toolTaskQueue: string;
  /**
   * Started over a running-mission limit: the workflow waits for its slot (`admitSignal`, or its own periodic
   * `admitMission` check) before it prepares. Absent, it starts at once.
   */
  queued?: boolean;
  /** A retry: where the loop goes on. Absent, the mission starts at turn 1. */
  resume?: MissionResume;
  /** MAX_QUEUED_MESSAGES when the mission started: the most messages waiting for delivery at once. */
  maxQueuedMessages?: number;
  /**
   * SESSION_HISTORY_EVENTS when the mission started: a session whose run's history holds this many events (or that
   * Temporal suggests continuing) continues as new at its next idle point. Absent: only when Temporal suggests it.
   */
  sessionHistoryEvents?: number;
  /** A session's later run: what the run before it carried over when it continued as new. */
  continued?: SessionCarry;
};

/**
 * What a session's next run needs when its run continues as new between exchanges: the plan, counters and ids, never
 * the transcript (in Postgres) or the events logged so far (stored by `storeEvents`; the log goes on after `events`).
 */
export type SessionCarry = {
  plan: MissionPlan;
  /** The exchanges answered so far, and the last one's first turn and result (the mission's, should it end idle). */
  exchange: number;
  fromTurn: number;
  result: MissionResult;
  /** The mission's running totals (budgets count them), its model calls so far (ids `model-<n>` go on) and approval wait. */
  metrics: Omit<MissionMetrics, 'approvalWaitMs' | 'elapsedMs'>;
  modelCalls: number;
  approvalWaitMs: number;
  /** The events cursor after the last event of the run before (workflows/events-cursor.ts). */
  events: { upTo: number; digest: string };
  /** Messages accepted and not yet delivered, in delivery order; the ids of the latest accepted (MESSAGE_IDS_CARRIED). */
  messages: QueuedMessage[];
  messageIds: string[];
  /** When the session's idle wait ends without a message (epoch ms, workflow time). */
  idleUntil: number;
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

/**
 * Whether a call of this tool goes straight to the tool activity: it needs no approval, its caller does not run it, and
 * it is not `delegate` or `create_script` (each a workflow step of its own). The one rule both sides read: the model
 * call writes such a call's start with its reply (activities/model-activity.ts), and the workflow runs it at once
 * (workflows/tool-calls.ts); every other call waits first (for a person, its caller, a child) and writes its own start.
 */
export function startsWithReply(tool: { qualifiedName: string; approval?: boolean; client?: boolean }): boolean {
  return !tool.approval && !tool.client && tool.qualifiedName !== `system.${DELEGATE}` && tool.qualifiedName !== `system.${CREATE_SCRIPT}`;
}

/** The frozen plan prepareMission returns: what the loop needs, small enough for history. */
export type MissionPlan = {
  tier: Tier;
  maxTurns: number;
  /** Token and cost budgets (the `changeBudget` update changes them in the workflow's copy). */
  budget: MissionBudget;
  /** `budgetPolicy: "pause"`: at the budget the mission waits `paused` for a raise, `timeoutS` at most (BUDGET_PAUSE_TIMEOUT_S). */
  budgetPause?: { timeoutS: number };
  /** `client`: the mission's caller runs the tool (its result arrives by the `toolResult` update). */
  tools: Array<{ modelName: string; qualifiedName: string; timeoutS: number; retries: number; approval?: boolean; client?: boolean }>;
  /** APPROVAL_TIMEOUT_S when the plan was made: how long a call that needs approval waits before it counts as denied. */
  approvalTimeoutS: number;
  /** A session (the start's `session: true` or the skill's `cadenza-session`): idle after each answer, for `idleTtlS` at most. */
  session?: { idleTtlS: number };
  /**
   * Context compaction (CONTEXT_COMPACT_AT_TOKENS, CONTEXT_KEEP_TURNS when the plan was made): once a call's prompt
   * reaches `atTokens`, the turns before the latest `keepTurns` are folded into a summary before the next call.
   */
  compaction?: { atTokens: number; keepTurns: number };
  /** PROVIDER_LIMITS were set when the plan was made: each model call first takes its turn (`reserveModelCall`). */
  providerLimits?: true;
  /** The stamp of the opening message as prepareMission stored it: the first model call passes it (`transcript`). */
  stamp?: string;
};

/** The compaction activity's input: fold the transcript before turn `turn - keepTurns`'s reply into a summary. */
export type CompactionInput = {
  missionId: string;
  turn: number;
  keepTurns: number;
  tier: Tier;
  /** The summary call goes to the tier's fallback `step`, as a turn's call does; absent: the primary. */
  fallback?: ModelFallback;
  /** Its turn at PROVIDER_LIMITS, taken as a turn's call takes it (`reserveModelCall`). */
  reservation?: string;
};
/** What a compaction folded (none when there was nothing new to fold), and what its summary call cost. */
export type CompactionResult = {
  folded: { uptoTurn: number; messages: number } | undefined;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
};

/** Hard limits on a mission's model usage; the workflow checks its running totals against them after each call. */
export type MissionBudget = { maxTokens?: number; maxCostUsd?: number };

export type ToolUse = { id: string; name: string; input: Record<string, unknown> };

/** What the workflow knows of a finished tool call; the output itself stays in Postgres. */
export type ToolOutcome = {
  toolUseId: string;
  status: ToolEndStatus;
  error?: string;
  /** The stamp of the output its activity stored: the worker that stored it need not read it back (`TranscriptCache`). */
  stamp?: string;
};

/**
 * Why the final model call is forced: the turn budget, the token/cost budget, or `output`: the answer missed the
 * mission's output schema and is asked once again, with what was wrong (the call's `messages`).
 */
export type FinalReason = 'turn_budget' | 'budget' | 'output';

/** An answer checked against the mission's output schema: its parsed value, or why it does not match. */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; errors: string };

export type ModelTurnInput = {
  missionId: string;
  turn: number;
  tier: Tier;
  /** Outcomes of the previous turn's tools, in the model's order; the activity turns them into tool results. */
  previous: ToolOutcome[];
  /** The forced final call: no tools offered, an instruction to answer now. */
  final: boolean;
  /** Why the final call is forced (the instruction says so); the turn budget when absent. */
  finalReason?: FinalReason;
  /** Texts of the messages a person sent, delivered in this call's user message after the tool results, in order. */
  messages?: string[];
  /** This turn's earlier call was cancelled by an interrupt: clients drop the text it streamed. */
  interrupted?: boolean;
  /** This call's name among the mission's model calls (`model-<n>`): an interrupt's cancel is announced by it. */
  callId: string;
  /** A session's exchange from the second on: its system prompt carries the user context read when it started. */
  exchange?: number;
  /** The call goes to the tier's fallback `step` (1: the first of MODEL_TIER_<TIER>_FALLBACKS); absent: the primary. */
  fallback?: ModelFallback;
  /** The turn reserved at its target's PROVIDER_LIMITS: the call settles it with the tokens it used. */
  reservation?: string;
  /**
   * The stamp of the transcript as the workflow last saw it stored (the last accepted call's result, or the plan's):
   * the worker that stored it under this stamp need not read it back. Absent: the call reads Postgres.
   */
  transcript?: string;
};

/** A model call asks for its turn at its target's limits; `promptTokens`: the last call's prompt and reply (an estimate). */
export type ProviderTurnInput = { missionId: string; callId: string; tier: Tier; fallback?: ModelFallback; promptTokens: number };
/** The call may go (`reservation` absent: its target has no limits), or asks again after `waitMs`. */
export type ProviderTurn =
  { granted: true; target: string; reservation?: string; waitedMs?: number } | { granted: false; target: string; waitMs: number };

/** Why a call went to a fallback: the target whose retries were spent (`from`), on what, and the one asked now (`to`). */
export type ModelFallback = { step: number; from: string; to: string; reason: FallbackReason };

export type ModelTurnResult = {
  stopReason: StopReason;
  toolUses: ToolUse[];
  text: string;
  /** The whole prompt; of it, `cacheReadTokens` read from the prompt cache and `cacheCreationTokens` written to it. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  /** The model id the tier resolved to for this call, and its provider (a fallback's, when one answered). */
  model?: string;
  provider?: string;
  /** The call's cost from MODEL_PRICES (0 when unpriced). */
  costUsd: number;
  /** An answer (no tool use) of a mission with an output schema: the activity's check of it. */
  output?: OutputCheck;
  /** The stamp of the transcript as this call stored it: the next call passes it back (`ModelTurnInput.transcript`). */
  stamp?: string;
  /**
   * Each tool use's embed id, in `toolUses`' order (present whenever there are tool uses): derived from mission, turn and
   * tool-use id, so every attempt's are the same.
   */
  embedIds?: string[];
  /** The calls whose start (feed row, embed `processing`) the reply's statement wrote, and the app switches it read. */
  starts?: ToolStarts;
};

/** Tool calls started with the reply: their tool-use ids, and the tenant's app switches as that statement read them. */
export type ToolStarts = { toolUseIds: string[]; switches: Record<string, boolean> };

/** One tool call: `retries` is the tool's own (app.yml) budget for failed tries; worker deaths do not spend it. */
export type ToolCallInput = {
  missionId: string;
  turn: number;
  toolUse: ToolUse;
  qualifiedName: string;
  timeoutS: number;
  retries: number;
  /** The invocation's embed id, unique across missions. */
  embedId: string;
  /** A client tool's result (or its deadline's error): the activity stores it instead of calling anything. */
  reply?: { ok: true; result: unknown } | { ok: false; error: string };
  /**
   * The tenant's app switches, read by the model call's statement that also wrote this call's start: the first attempt
   * writes no start of its own. Absent (a call that waited for a person, or whose start the reply did not write): read at call time.
   */
  switches?: Record<string, boolean>;
};
/** `embed`: counts of what the call's embed holds (never its content, which stays in Postgres). */
export type ToolCallResult = {
  status: 'completed' | 'error';
  durationMs: number;
  error?: string;
  embed?: EmbedSummary;
  /** The stamp of the output as this attempt stored it (`ToolOutcome.stamp`). */
  stamp?: string;
};

/** A tool call the workflow ended without its activity reporting it (cancelled, failed, never run): its feed rows. */
export type ToolCallEnd = {
  toolUseId: string;
  tool: string;
  turn: number;
  status: ToolEndStatus;
  durationMs: number;
  error?: string;
  /** Its embed, ended with the same status. */
  embedId: string;
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
  /** Of `inputTokens`, those read from the provider's prompt cache, and those written to it (absent: none). */
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
};
/** `budget`: the token or cost budget ended the mission with a forced final call. */
export type MissionResult = {
  text: string;
  /** The canvas specs the mission's tool results carried, in order (`GET /canvases/:id`). */
  canvasSpecIds: string[];
  /** What the tools suggested the caller could ask next (`suggestions_follow_up_requests`), in order, without repeats. */
  followUps?: string[];
  /** A mission with an output schema: the answer, parsed and matching it (`text` is the answer as the model wrote it). */
  output?: unknown;
  metrics: MissionMetrics;
  stoppedBy: 'answer' | 'turn_budget' | 'max_tokens' | 'budget';
};

/** Live state for `GET /missions/:id`. */
export type MissionState = {
  status: MissionStatus;
  turn: number;
  tools: Array<{ toolUseId: string; name: string; status: ToolStatus; durationMs?: number; embedId: string }>;
  result?: MissionResult;
  /** A session's exchanges, each ended with its own result, oldest first (the latest is also `result`). */
  exchanges?: MissionResult[];
  /** A session's later run: the exchanges answered in the runs before it (in `missions.exchanges`, not in `exchanges`). */
  exchangesBefore?: number;
  error?: MissionError;
};
export const stateQuery = defineQuery<MissionState>('state');

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
/** A queued mission's slot is free (sent by the admission pass that gave it the slot); repeats change nothing. */
export const admitSignal = defineSignal('admit');
