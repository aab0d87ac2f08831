import { z } from 'zod';
import { timestamp } from './openapi/route-doc.ts';
import { FALLBACK_REASONS } from '../contracts/model.ts';

// The shapes of missionSummary and missionDetail (mission-view.ts) and of the SSE events, for the OpenAPI document
// and the response check of the tests. Loose objects: fields may be added (HTTP contract), never removed.

export const MISSION_STATUSES = ['queued', 'starting', 'running', 'idle', 'paused', 'completed', 'failed', 'cancelled'] as const;
const TOOL_STATUSES = ['running', 'awaiting_approval', 'completed', 'error', 'cancelled', 'denied'] as const;
const EMBED_STATUSES = ['processing', 'finished', 'error', 'cancelled'] as const;

export const missionSummarySchema = z.looseObject({
  id: z.uuid(),
  status: z.enum(MISSION_STATUSES),
  skill: z.looseObject({ name: z.string(), version: z.number().int() }),
  objective: z.string(),
  createdAt: timestamp,
  finishedAt: timestamp.nullable(),
  limits: z.looseObject({}).optional(),
  retryOf: z.uuid().optional(),
  session: z.boolean().optional(),
  /** Present when the mission waits `paused` at its budget instead of making a final answer. */
  budgetPolicy: z.literal('pause').optional(),
  /** The schedule that started the mission. */
  scheduleId: z.uuid().optional(),
  /** The mission whose `delegate` call started this one (a sub-mission). */
  parentId: z.uuid().optional(),
  links: z.looseObject({ self: z.string(), events: z.string() }),
});

const metrics = z.looseObject({
  turns: z.number().int(),
  toolCalls: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  elapsedMs: z.number(),
  costUsd: z.number().optional(),
  /** Of inputTokens, those read from the provider's prompt cache and those written to it. */
  cacheReadTokens: z.number().int().optional(),
  cacheCreationTokens: z.number().int().optional(),
});

const result = z.looseObject({
  text: z.string(),
  canvasSpecIds: z.array(z.string()),
  followUps: z.array(z.string()).optional(),
  /** A mission with an output schema: the answer parsed, matching it. */
  output: z.unknown().optional().describe("The answer parsed as JSON, matching the mission's output schema (absent without one)"),
  metrics,
  stoppedBy: z.enum(['answer', 'turn_budget', 'max_tokens', 'budget']).optional(),
});

export const missionDetailSchema = missionSummarySchema.extend({
  workflowId: z.string(),
  turn: z.number().int(),
  tools: z.array(
    z.looseObject({
      toolUseId: z.string(),
      embedId: z.string().optional(),
      name: z.string(),
      status: z.enum(TOOL_STATUSES),
      durationMs: z.number().nullable().optional(),
    }),
  ),
  result: result.optional(),
  /** A session's exchanges, each with its own result, oldest first (the latest is also `result`). */
  exchanges: z.array(result).optional(),
  error: z.looseObject({ phase: z.string(), message: z.string() }).optional(),
  provenance: z.array(z.unknown()),
  retriedBy: z.unknown().optional(),
  unavailableTools: z.array(z.unknown()).optional(),
  preselection: z.unknown().optional(),
  /** The sub-missions its `delegate` calls started, oldest first. */
  children: z
    .array(
      z.looseObject({
        id: z.uuid(),
        status: z.enum(MISSION_STATUSES),
        skill: z.looseObject({ name: z.string(), version: z.number().int() }),
        createdAt: timestamp,
        finishedAt: timestamp.nullable(),
      }),
    )
    .optional(),
  /** The JSON Schema the answer must match (the start's, else the skill's): `result.output` holds the answer parsed. */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  /** The memories the mission's user context held (ids by kind) and how many were left out, and why. */
  contextMemories: z
    .looseObject({
      total: z.number().int(),
      shown: z.object({ saved: z.array(z.string()), missions: z.array(z.string()) }),
      leftOut: z.object({ belowRelevance: z.number().int(), overBudget: z.number().int(), duplicates: z.number().int() }),
    })
    .optional(),
});

/** What a cancel answers: the mission id and `cancelling` (or `cancelled` when it never started). */
export const missionCancelSchema = z.looseObject({ id: z.uuid(), status: z.enum(['cancelling', 'cancelled']) });
export const toolCancelSchema = z.looseObject({ toolUseId: z.string(), embedId: z.string().optional(), status: z.literal('cancelling') });

/**
 * What an accepted message answers: its id (the same for a retried request with the same key) and its place, 1 next;
 * 0 when a retried request reaches a session's later run, whose earlier run took the message already.
 */
export const messageReplySchema = z.looseObject({ messageId: z.string(), position: z.number().int().min(0) });

const event = <T extends z.ZodRawShape>(shape: T) => z.looseObject({ seq: z.number().int(), at: timestamp, ...shape });

/** The `data` of each durable SSE event type of GET /missions/:id/events (`id:` its seq), by `event:` name. */
export const missionEventSchemas: Record<string, z.ZodType> = {
  status: event({ type: z.literal('status'), status: z.enum(MISSION_STATUSES) }),
  turn: event({ type: z.literal('turn'), turn: z.number().int() }),
  tool_start: event({ type: z.literal('tool_start'), toolUseId: z.string(), tool: z.string(), turn: z.number().int() }),
  tool_end: event({
    type: z.literal('tool_end'),
    toolUseId: z.string(),
    tool: z.string(),
    status: z.enum(TOOL_STATUSES),
    durationMs: z.number(),
    error: z.string().optional(),
  }),
  // Without seq when the stream itself fails (the mission's workflow is gone).
  error: z.looseObject({ phase: z.string().optional(), message: z.string() }),
  tool_attempt: event({
    type: z.literal('tool_attempt'),
    toolUseId: z.string(),
    progress: z.number().int(),
    total: z.number().int(),
    message: z.string(),
  }),
  embed: event({
    type: z.literal('embed'),
    embedId: z.string(),
    toolUseId: z.string(),
    tool: z.string(),
    status: z.enum(EMBED_STATUSES),
    summary: z.looseObject({ previews: z.number(), canvases: z.number(), followUps: z.number(), warnings: z.number() }).optional(),
  }),
  approval_requested: event({
    type: z.literal('approval_requested'),
    toolUseId: z.string(),
    tool: z.string(),
    turn: z.number().int(),
    input: z.record(z.string(), z.unknown()),
    expiresAt: timestamp,
  }),
  approval_decided: event({
    type: z.literal('approval_decided'),
    toolUseId: z.string(),
    tool: z.string(),
    decision: z.enum(['approved', 'denied', 'timed_out', 'cancelled']),
    waitedMs: z.number(),
    reason: z.string().optional(),
    edited: z.boolean().optional(),
  }),
  message: event({
    type: z.literal('message'),
    messageId: z.string(),
    mode: z.enum(['queue', 'interrupt']),
    turn: z.number().int(),
    text: z.string(),
  }),
  budget_reached: event({
    type: z.literal('budget_reached'),
    turn: z.number().int(),
    budget: z.looseObject({ maxTokens: z.number().int().optional(), maxCostUsd: z.number().optional() }),
    spent: z.looseObject({ tokens: z.number().int(), costUsd: z.number() }),
  }),
  context_compacted: event({
    type: z.literal('context_compacted'),
    turn: z.number().int(),
    uptoTurn: z.number().int(),
    messages: z.number().int(),
    promptTokens: z.number().int(),
  }),
  model_fallback: event({
    type: z.literal('model_fallback'),
    turn: z.number().int(),
    from: z.string().describe('The `provider:model` whose retries were spent'),
    to: z.string().describe("The next `provider:model` of the tier's chain (MODEL_TIER_<TIER>_FALLBACKS), asked now"),
    reason: z.enum(FALLBACK_REASONS),
    message: z.string().describe('The last error of `from`'),
  }),
  provider_wait: event({
    type: z.literal('provider_wait'),
    turn: z.number().int(),
    target: z.string().describe('The `provider:model` whose PROVIDER_LIMITS are spent for now'),
    waitMs: z.number().int().describe('About how long until the call may go (it waits durably, then asks again)'),
  }),
  delegate: event({
    type: z.literal('delegate'),
    toolUseId: z.string().describe('The `delegate` call that started the sub-mission'),
    childId: z.uuid().describe('The sub-mission: a mission of its own (`GET /missions/{childId}`)'),
    skill: z.string(),
    status: z.enum(['started', 'completed', 'failed', 'cancelled']),
  }),
  client_tool_call: event({
    type: z.literal('client_tool_call'),
    toolUseId: z.string().describe('The call to answer: POST /missions/{id}/tools/{toolUseId}/result'),
    tool: z.string(),
    turn: z.number().int(),
    input: z.record(z.string(), z.unknown()),
    deadline: timestamp.describe('After it, the call ends as an error the model sees'),
  }),
  output_rejected: event({
    type: z.literal('output_rejected'),
    turn: z.number().int(),
    errors: z.string().describe("Why the answer does not match the mission's output schema (the model is shown the same)"),
    retried: z.boolean().describe('true: asked once again in the next call; false: the mission fails in phase `output`'),
  }),
};

/** The `data` of each live SSE event type: sent without `id:` as they happen, never replayed on resume. */
export const liveEventSchemas: Record<string, z.ZodType> = {
  text_delta: z.looseObject({ type: z.literal('text_delta'), turn: z.number().int(), text: z.string() }),
  reset: z.looseObject({ type: z.literal('reset'), turn: z.number().int() }),
  tool_progress: z.looseObject({
    type: z.literal('tool_progress'),
    toolUseId: z.string(),
    progress: z.number(),
    total: z.number().optional(),
    message: z.string().optional(),
  }),
};
