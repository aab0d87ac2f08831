import { Router } from 'express';
import { z } from 'zod';
import { MAX_TURNS_CEILING } from '../../contracts/limits.ts';
import { findOwnedMission, listOwnedMissions } from '../../db/missions.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, authenticateStart, principal, requireCapability } from '../auth.ts';
import type { SkillRead } from '../../db/skills.ts';
import { cursorKey, cursorParam, nextCursor, UUID_KEY } from '../cursor.ts';
import { notFound } from '../errors.ts';
import { retryMission } from '../mission-retry.ts';
import { startMission } from '../../missions/start-mission.ts';
import { cancelMission } from '../../missions/cancel-mission.ts';
import { missionDetail, missionSummary } from '../mission-view.ts';
import { streamMissionEvents } from '../../events/sse.ts';
import { cancelToolCall } from '../tool-cancel.ts';
import { submitToolResult } from '../tool-result.ts';
import { closeSession, sendMissionMessage } from '../mission-messages.ts';
import { changeMissionBudget } from '../mission-budget.ts';
import { MAX_MESSAGE_CHARS } from '../../contracts/messages.ts';
import { queryInt, validate } from '../validate.ts';
import {
  missionCancelSchema,
  missionDetailSchema,
  MISSION_STATUSES,
  missionEventSchemas,
  liveEventSchemas,
  missionSummarySchema,
  toolCancelSchema,
  messageReplySchema,
} from '../mission-schemas.ts';
import { page, routeGroup } from '../openapi/route-doc.ts';

const startBody = z
  .object({
    skill: z.string().trim().min(1).max(64),
    objective: z.string().trim().min(1).max(20_000),
    workspaceCode: z.string().trim().min(1).max(128),
    conversationContext: z.string().max(100_000).optional(),
    maxTurns: z.number().int().min(1).max(MAX_TURNS_CEILING).optional(),
    idempotencyKey: z.string().trim().min(1).max(200).optional(),
    maxTokens: z.number().int().min(1).max(1_000_000_000).optional(),
    maxCostUsd: z.number().positive().max(100_000).optional(),
    /** At the budget: `final` (default) makes a forced final answer; `pause` waits `paused` for a raise (PATCH). */
    budgetPolicy: z.enum(['final', 'pause']).optional(),
    embedRefs: z.array(z.string().trim().min(1).max(64)).max(20).optional(),
    session: z.boolean().optional(),
    /** A JSON Schema (of an object) the answer must match: `result.output` holds it parsed; invalid → 400. */
    outputSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "A JSON Schema (type: object) the final answer must match; `result.output` holds the parsed answer. Overrides the skill's `metadata.cadenza-output-schema`.",
      ),
  })
  .strict();
// New budgets for a running mission (PATCH); a field left out stays as it was (an empty body changes nothing).
const budgetBody = z
  .object({
    maxTokens: z.number().int().min(1).max(1_000_000_000).optional(),
    maxCostUsd: z.number().positive().max(100_000).optional(),
  })
  .strict();
const budgetReplySchema = z.looseObject({
  id: z.uuid(),
  budget: z.looseObject({ maxTokens: z.number().int().optional(), maxCostUsd: z.number().optional() }),
});
// A message to a running mission or an idle session; a text over MAX_MESSAGE_CHARS is a 413 (checked by the service).
const messageBody = z
  .object({
    // A pattern, not a refinement: the OpenAPI document states it, so a fuzzer's blank text is known to be refused.
    text: z.string().regex(/\S/, 'must not be empty'),
    mode: z.enum(['queue', 'interrupt']).default('queue'),
    cancelTools: z.boolean().optional(),
    idempotencyKey: z.string().trim().min(1).max(200).optional(),
    /** Limits of the exchange the message is delivered in (the session's own budget still holds). */
    limits: z
      .object({
        maxTokens: z.number().int().min(1).max(1_000_000_000).optional(),
        maxCostUsd: z.number().positive().max(100_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
// Any JSON value, stated without recursion (z.json() is recursive: its $defs do not survive into the document).
const jsonValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);
// A client tool's result: its output (checked against the tool's output_schema) or an error the model reads instead.
const toolResultBody = z.union(
  [
    z.strictObject({ output: jsonValue.describe("The tool's output, JSON; checked against its `output_schema` when it declares one") }),
    z.strictObject({ error: z.string().trim().min(1).max(10_000).describe('Why the tool failed: the model reads it as the result') }),
  ],
  { error: 'send {output} or {error}, not both or neither' },
);
const toolResultReplySchema = z.looseObject({ toolUseId: z.string(), status: z.enum(['completed', 'error']) });
// A mission row's statuses: `queued` while it waits for a slot (running-mission limits), `starting` until its workflow
// start is confirmed, then the workflow's own.
const retryBody = z
  .object({
    fromTurn: z
      .number()
      .int()
      .min(1)
      .max(MAX_TURNS_CEILING + 1)
      .optional(),
    idempotencyKey: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  // A retry may be sent without a body.
  .default({});
// Strict: a misspelt filter (`?state=`) is a 400, never a silently unfiltered list.
const listQuery = z
  .object({
    limit: queryInt(1, 100).default(20),
    cursor: cursorParam('m', UUID_KEY).optional(),
    status: z.enum(MISSION_STATUSES).optional(),
    skill: z.string().trim().min(1).max(64).optional(),
    scheduleId: z.uuid().optional(),
  })
  .strict();

const read = { capabilities: ['mission.read' as const] };
const run = { capabilities: ['mission.run' as const] };
/** The OpenAPI documentation of the routes below. */
export const missionRouteDocs = routeGroup('/api/v1/missions', 'missions', [
  { method: 'post', path: '/', summary: 'Start a mission', access: run, body: startBody, responses: { 202: missionSummarySchema } },
  {
    method: 'get',
    path: '/',
    summary: "The caller's missions, newest first",
    access: read,
    query: listQuery,
    responses: { 200: page(missionSummarySchema) },
  },
  {
    method: 'get',
    path: '/:id',
    summary: 'A mission: status, turn, tools, result or error',
    access: read,
    responses: { 200: missionDetailSchema },
  },
  {
    method: 'get',
    path: '/:id/events',
    summary: "A mission's progress as Server-Sent Events",
    access: read,
    responses: {
      200: {
        media: 'text/event-stream',
        body: 'sse',
        description:
          'Frames `id: <seq>`, `event: <type>`, `data: <json>`; `Last-Event-ID` (or `?lastEventId=`) resumes after that seq. ' +
          'Comment lines keep the connection open; the stream closes after the terminal `status` event. ' +
          'Live events (`text_delta`, `reset`, `tool_progress`) come without an id and are never replayed. The schema is ' +
          'one object per event type: its SSE fields, and `data` as JSON text of the schema in `contentSchema`.',
        events: missionEventSchemas,
        live: liveEventSchemas,
      },
    },
  },
  { method: 'post', path: '/:id/cancel', summary: 'Cancel the whole mission', access: run, responses: { 202: missionCancelSchema } },
  {
    method: 'post',
    path: '/:id/retry',
    summary: 'Run a failed or cancelled mission again, from a turn',
    access: run,
    body: retryBody,
    responses: { 202: missionSummarySchema },
  },
  {
    method: 'post',
    path: '/:id/messages',
    summary: 'Send a message: queued for the next turn, or interrupting the model call in flight',
    description:
      '`queue` (default) delivers the message at the next turn boundary, after the running tool calls end; `interrupt` ' +
      'cancels the model call in flight (with `cancelTools`, the running tool calls too) and asks again with the message. ' +
      `409 when the mission ended or MAX_QUEUED_MESSAGES wait already; 413 over ${MAX_MESSAGE_CHARS} characters. ` +
      'The same idempotencyKey is the same message.',
    access: run,
    body: messageBody,
    responses: { 202: messageReplySchema },
  },
  {
    method: 'patch',
    path: '/:id',
    summary: "Change a running mission's token and cost budgets; a mission paused at its budget goes on",
    description:
      'A field left out stays as it was. A mission started with `budgetPolicy: "pause"` waits `paused` at its budget ' +
      'until a change lets its next model call fit (or BUDGET_PAUSE_TIMEOUT_S passes: then it makes its final answer). ' +
      '409 when the mission ended; 422 for a cost budget on a model without a price.',
    access: run,
    body: budgetBody,
    responses: { 200: budgetReplySchema },
  },
  {
    method: 'post',
    path: '/:id/close',
    summary: 'End a session: idle, it ends completed now; running, once its exchange answers',
    access: run,
    responses: { 202: z.looseObject({ id: z.uuid(), status: z.literal('closing') }) },
  },
  {
    method: 'post',
    path: '/:id/tools/:toolUseId/cancel',
    summary: 'Cancel one running tool call',
    access: run,
    responses: { 202: toolCancelSchema },
  },
  {
    method: 'post',
    path: '/:id/tools/:toolUseId/result',
    summary: 'Send the result of a tool the caller runs (a waiting `client_tool_call`)',
    description:
      'Completes a call of a `runs: client` tool while it waits (its `client_tool_call` event gives the input and the ' +
      "deadline). 400 naming the field when the output does not match the tool's `output_schema`; 409 when the call " +
      'is not waiting (answered, past its deadline, cancelled, not a client tool, or the mission ended).',
    access: run,
    body: toolResultBody,
    responses: { 200: toolResultReplySchema },
  },
]);

/** How young a mission's stream counts as opened on a mission that has just started (`Subscriber.fresh`). */
const FRESH_MS = 2_000;

/** Missions: start, list, read, stream progress, cancel the mission or one tool call. */
export function missionsRouter(deps: ApiDeps): Router {
  const { db } = deps;
  const router = Router();
  // Before `authenticate`: a start reads the key and the skill it names in one statement.
  router.post('/', authenticateStart(db), requireCapability('mission.run'), validate('body', startBody), async (_req, res) => {
    const body = res.locals.body as z.infer<typeof startBody>;
    const read = res.locals.skillRead as SkillRead | undefined;
    // The same idempotency key answers exactly as the first request did: same mission, same status code.
    const { row } = await startMission(deps, principal(res), { ...body, ...(read?.name === body.skill ? { skillRead: read } : {}) });
    res.status(202).json(missionSummary(row));
  });
  router.use(authenticate(db));
  const owned = async (res: Parameters<typeof principal>[0], id: string) => {
    const row = await findOwnedMission(db, principal(res), id);
    if (!row) throw notFound('mission');
    return row;
  };

  router.get('/', requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const { limit, cursor, status, skill, scheduleId } = res.locals.query as z.infer<typeof listQuery>;
    const rows = await listOwnedMissions(
      db,
      principal(res),
      { limit, ...(cursor ? { afterId: cursorKey(cursor) } : {}) },
      { ...(status ? { status } : {}), ...(skill ? { skillName: skill } : {}), ...(scheduleId ? { scheduleId } : {}) },
    );
    res.json({ items: rows.map(missionSummary), nextCursor: nextCursor(rows, limit, 'm', (r) => r.id) });
  });

  router.get('/:id', requireCapability('mission.read'), async (req, res) => {
    res.json(await missionDetail(deps, await owned(res, String(req.params.id))));
  });

  router.get('/:id/events', requireCapability('mission.read'), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    // Started moments ago and still running: its first events are yet to be logged, and they come pushed.
    const fresh = ['starting', 'running'].includes(row.status) && Date.now() - new Date(row.created_at).getTime() < FRESH_MS;
    streamMissionEvents(req, res, deps.relay, { id: row.id, fresh }, deps.sseKeepAliveMs);
    deps.metrics.sseOpened();
    res.on('close', () => deps.metrics.sseClosed());
  });

  router.post('/:id/cancel', requireCapability('mission.run'), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    res.status(202).json({ id: row.id, status: await cancelMission(deps, row) });
  });

  router.post('/:id/retry', requireCapability('mission.run'), validate('body', retryBody), async (req, res) => {
    const { row } = await retryMission(deps, principal(res), String(req.params.id), res.locals.body);
    res.status(202).json(missionSummary(row));
  });

  router.post('/:id/messages', requireCapability('mission.run'), validate('body', messageBody), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    res.status(202).json(await sendMissionMessage(deps, row, res.locals.body as z.infer<typeof messageBody>));
  });

  router.patch('/:id', requireCapability('mission.run'), validate('body', budgetBody), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    const budget = await changeMissionBudget(deps, row, res.locals.body as z.infer<typeof budgetBody>);
    res.json({ id: row.id, budget });
  });

  router.post('/:id/close', requireCapability('mission.run'), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    res.status(202).json({ id: row.id, ...(await closeSession(deps, row)) });
  });

  router.post('/:id/tools/:toolUseId/cancel', requireCapability('mission.run'), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    res.status(202).json(await cancelToolCall(deps, row, String(req.params.toolUseId)));
  });

  router.post('/:id/tools/:toolUseId/result', requireCapability('mission.run'), validate('body', toolResultBody), async (req, res) => {
    const row = await owned(res, String(req.params.id));
    res.json(await submitToolResult(deps, row, String(req.params.toolUseId), res.locals.body as z.infer<typeof toolResultBody>));
  });
  return router;
}
