import type { Sinks } from '@temporalio/workflow';
import { defineQuery } from '@temporalio/workflow';
import type { EmbedStatus, EmbedSummary } from './embeds.ts';
import type { ApprovalOutcome } from './approvals.ts';
import type { MissionBudget, MissionEndStatus, MissionError, MissionStatus, ToolEndStatus } from './mission.ts';
import type { FactoryProgress } from './script-factory.ts';
import type { MessageMode } from './messages.ts';
import type { FallbackReason } from './model.ts';
import type { EvalRunEvent } from './evals.ts';

/** A mission's events: the durable event log the workflow keeps (served by its query) and the live events beside it. */

/** One event of the log; `seq` is dense from 1 and is the SSE id. */
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
  | ({ type: 'error' } & MissionError)
  | ({ type: 'tool_attempt' } & FactoryProgress)
  | { type: 'embed'; embedId: string; toolUseId: string; tool: string; status: EmbedStatus; summary?: EmbedSummary }
  /** The transcript before turn `uptoTurn`'s reply was folded into a summary (`messages` of them) before turn `turn`'s call. */
  | { type: 'context_compacted'; turn: number; uptoTurn: number; messages: number; promptTokens: number }
  /**
   * The next model call after `turn` would pass the mission's budget and its policy is `pause`: it waits `paused` until
   * the budget is raised or BUDGET_PAUSE_TIMEOUT_S passes. `spent` is what the mission used so far.
   */
  | { type: 'budget_reached'; turn: number; budget: MissionBudget; spent: { tokens: number; costUsd: number } }
  /** Turn `turn`'s call moved from one `provider:model` to the tier's next, its retries spent on `reason` (`message`: the last error). */
  | { type: 'model_fallback'; turn: number; from: string; to: string; reason: FallbackReason; message: string }
  /** Turn `turn`'s call waits for its turn at `target`'s PROVIDER_LIMITS (a durable timer), about `waitMs` (told once per call). */
  | { type: 'provider_wait'; turn: number; target: string; waitMs: number }
  /** A message a person sent was delivered: it is in the user message of `turn`'s model call. Its `text` as sent. */
  | { type: 'message'; messageId: string; mode: MessageMode; turn: number; text: string }
  /** Tool call `toolUseId` (a `delegate`) started the child mission `childId`, running `skill`; and how the child ended. */
  | { type: 'delegate'; toolUseId: string; childId: string; skill: string; status: 'started' | MissionEndStatus }
  /** Tool call `toolUseId` is run by the mission's caller: it waits for a result sent to the API until `deadline`. */
  | { type: 'client_tool_call'; toolUseId: string; tool: string; turn: number; input: Record<string, unknown>; deadline: string }
  /**
   * The answer of `turn`'s call missed the mission's output schema (`errors`, as the model is told): `retried`, it is
   * asked once again in the next call; else the mission fails in phase `output`.
   */
  | { type: 'output_rejected'; turn: number; errors: string; retried: boolean }
);
export type MissionEventBody = MissionEvent extends infer E ? (E extends unknown ? Omit<E, 'seq' | 'at'> : never) : never;

/**
 * `storedUpTo`: a session's later run (it continued as new) holds the events after this seq only; those up to it are
 * stored in Postgres (`mission_events`), where the API reads them.
 */
export type EventsPage<E = MissionEvent> = { events: E[]; done: boolean; storedUpTo?: number };

/**
 * An event of a workflow's event log that the relay streams: a mission's, or an eval run's (contracts/evals.ts). Both
 * workflows answer the one events query, and the relay and the SSE writer serve both the same way.
 */
export type LogEvent = MissionEvent | EvalRunEvent;
/**
 * The events after `afterSeq` (those this run holds), and whether the log is complete (the mission ended). An eval run
 * answers the same query with its own events (`evalRunEventsQuery`).
 */
export const eventsQuery = defineQuery<EventsPage, [afterSeq: number]>('events');

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

/**
 * How far a mission's event log reached and a digest of all of it: what the workflow had emitted when it scheduled an
 * activity. Carried in that activity's header, the worker that starts the activity sends it as the proof that those
 * events are recorded, and the API's relays push the events they hold that it matches (docs/architecture.md, the
 * `events/` row).
 */
export type EventsCursor = { upTo: number; digest: string };
/** The activity header that carries the cursor. */
export const EVENTS_HEADER = 'cadenza-events';

/**
 * What one workflow activation logged, handed to the worker in one sink call after it: the events in seq order, each
 * with the events cursor's digest after it ('' for a log no activity claims), `ended` when the last is the terminal
 * event (the mission's final events are stored), and `claimed`, the highest seq an activity the activation scheduled
 * will claim (0: none).
 */
export type ProgressBatch = { events: Array<{ event: LogEvent; digest: string }>; ended: boolean; claimed: number };

/**
 * Worker-side calls of the workflow, outside history and skipped on replay: `progress.logged(batch)` once after each
 * activation that logged events or scheduled an activity with the cursor, so the worker wakes the API's relay (which
 * then asks the events query, still the only record, unless it has read that far already) or holds them for a push.
 */
export interface MissionSinks extends Sinks {
  progress: { logged(batch: ProgressBatch): void };
}
