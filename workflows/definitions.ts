import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate, type Sinks } from '@temporalio/workflow';
import type { StopReason, Tier } from '../contracts/model.ts';

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

export type MissionStatus = 'running' | 'completed' | 'failed' | 'cancelled';
export type ToolStatus = 'running' | 'completed' | 'error' | 'cancelled';

/** Workflow input: ids only; the skill body, transcript and tool catalog live in Postgres. */
export type MissionInput = {
  missionId: string;
  /** Task queue of the model activities (a worker with MODEL_CONCURRENCY slots serves it). */
  modelTaskQueue: string;
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
  tools: Array<{ modelName: string; qualifiedName: string; timeoutS: number; retries: number }>;
};

/** Hard limits on a mission's model usage; the workflow checks its running totals against them after each call. */
export type MissionBudget = { maxTokens?: number; maxCostUsd?: number };

export type ToolUse = { id: string; name: string; input: Record<string, unknown> };

/** What the workflow knows of a finished tool call; the output itself stays in Postgres. */
export type ToolOutcome = { toolUseId: string; status: Exclude<ToolStatus, 'running'>; error?: string };

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
export type ToolCallInput = { missionId: string; turn: number; toolUse: ToolUse; qualifiedName: string; timeoutS: number; retries: number };
export type ToolCallResult = { status: 'completed' | 'error'; durationMs: number; error?: string };

/** A tool call the workflow ended without its activity reporting it (cancelled, failed, never run): its feed rows. */
export type ToolCallEnd = {
  toolUseId: string;
  tool: string;
  turn: number;
  status: Exclude<ToolStatus, 'running'>;
  durationMs: number;
  error?: string;
};

export type MissionMetrics = {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  elapsedMs: number;
  /** USD, from MODEL_PRICES; calls of unpriced models count 0. */
  costUsd: number;
};
/** `budget`: the token or cost budget ended the mission with a forced final call. */
export type MissionResult = {
  text: string;
  canvasSpecIds: string[];
  metrics: MissionMetrics;
  stoppedBy: 'answer' | 'turn_budget' | 'max_tokens' | 'budget';
};

/** One progress event; `seq` is dense from 1 and is the SSE id. */
export type MissionEvent = { seq: number; at: string } & (
  | { type: 'status'; status: MissionStatus; resumed?: { retryOf: string; turn: number } }
  | { type: 'turn'; turn: number }
  | { type: 'tool_start'; toolUseId: string; tool: string; turn: number }
  | { type: 'tool_end'; toolUseId: string; tool: string; status: Exclude<ToolStatus, 'running'>; durationMs: number; error?: string }
  | { type: 'error'; phase: string; message: string }
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
 * Worker-side calls of the workflow, outside history and skipped on replay: `progress.changed()` after the workflow
 * emitted events, so the worker wakes the API's relay (which then asks the events query, still the only record).
 */
export interface MissionSinks extends Sinks {
  progress: { changed(): void };
}

/** Live state for `GET /missions/:id`. */
export type MissionState = {
  status: MissionStatus;
  turn: number;
  tools: Array<{ toolUseId: string; name: string; status: ToolStatus; durationMs?: number }>;
  result?: MissionResult;
  error?: { phase: string; message: string };
};

/** What an accepted tool cancel answers; the call's `tool_end` follows on the event log. */
export type ToolCancelReply = { toolUseId: string; status: 'cancelling' };
/** Why a tool cancel is refused (the failure type of the rejected update). */
export const TOOL_CALL_NOT_FOUND = 'ToolCallNotFound';
export const TOOL_CALL_FINISHED = 'ToolCallFinished';

/**
 * Cancels one running tool call. The validator refuses an unknown or finished call inside the workflow, atomically
 * with the cancel, and a refused update writes no history.
 */
export const cancelToolUpdate = defineUpdate<ToolCancelReply, [toolUseId: string]>('cancelTool');
/** The signal the API sent before the update; its handler stays so recorded histories replay. */
export const cancelToolSignal = defineSignal<[toolUseId: string]>('cancelTool');
export const eventsQuery = defineQuery<EventsPage, [afterSeq: number]>('events');
export const stateQuery = defineQuery<MissionState>('state');
