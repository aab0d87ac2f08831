import { contentToText, EventType, type BaseEvent } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../contracts/errors.ts';
import { findOwnedMission, getMission, missionIdTaken } from '../db/missions.ts';
import { listOwnedSkills } from '../db/skills.ts';
import type { MissionRow } from '../db/schema.ts';
import { startMission } from '../missions/start-mission.ts';
import { authenticate, principal, requireCapability, type Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { sendMissionMessage } from '../server/mission-messages.ts';
import { missionDetail } from '../server/mission-view.ts';
import { routeGroup } from '../server/openapi/route-doc.ts';
import { agUiTranslator, type RunEnd } from './ag-ui-events.ts';

const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

const runInput = z.looseObject({
  threadId: z.string().describe('The session’s mission id: a new id starts a session with that id, a known one continues it'),
  runId: z.string(),
  messages: z.array(z.looseObject({ role: z.string() })).describe('The objective (or the next message) is the last user message'),
  forwardedProps: z.looseObject({ skill: z.string().optional(), workspaceCode: z.string().optional() }).optional(),
});
/** The OpenAPI documentation of `/ag-ui` (the AG-UI protocol's own schemas state its events). */
export const agUiRouteDocs = routeGroup('/ag-ui', 'ag-ui', [
  {
    method: 'post',
    path: '/',
    summary: 'AG-UI: run an exchange of a session and stream its AG-UI events',
    description:
      'The body is the AG-UI `RunAgentInput`. `forwardedProps.skill` names the skill of a new thread (default: the caller’s only active skill). The answer is an SSE stream of AG-UI events, RUN_STARTED to RUN_FINISHED or RUN_ERROR. Needs mission.run.',
    access: { capabilities: ['mission.run'] },
    body: runInput,
    responses: { 200: { media: 'text/event-stream', body: 'text', description: 'AG-UI events' } },
  },
]);

/**
 * `/ag-ui`: an AG-UI agent endpoint (the `HttpAgent` of `@ag-ui/client` POSTs `RunAgentInput` to it). The thread
 * id is the session's mission id: a new one starts a session with that id, a known one sends it the last user
 * message. The stream ends with the exchange; the mission outlives a client that drops it.
 */
export function agUiRouter(deps: ApiDeps): Router {
  const router = Router();
  router.post('/', authenticate(deps.db), requireCapability('mission.run'), async (req, res) => {
    const input = parseInput(req.body);
    const owner = principal(res);
    const objective = lastUserText(input.messages);
    const thread = await findOwnedMission(deps.db, owner, input.threadId);
    let row: MissionRow;
    let sentMessageId: string | undefined;
    if (thread) {
      row = thread;
      sentMessageId = (await sendMissionMessage(deps, row, { text: objective, mode: 'queue', idempotencyKey: `ag-ui/${input.runId}` }))
        .messageId;
    } else {
      // Someone else's thread is as missing as one that never was; its id cannot start another session.
      if (await missionIdTaken(deps.db, input.threadId)) throw new NotFoundError(`threadId: no thread ${input.threadId}`);
      const props = (input.forwardedProps ?? {}) as { skill?: unknown; workspaceCode?: unknown };
      ({ row } = await startMission(deps, owner, {
        id: input.threadId,
        skill: await skillOf(deps, owner, props.skill),
        objective,
        workspaceCode: typeof props.workspaceCode === 'string' && props.workspaceCode ? props.workspaceCode : 'ag-ui',
        session: true,
      }));
    }
    stream(deps, req, res, { row, threadId: input.threadId, runId: input.runId, sentMessageId, fresh: !thread });
  });
  return router;
}

/** Streams the run's AG-UI events from the mission's event stream (the relay), until the exchange answers or fails. */
function stream(
  deps: ApiDeps,
  req: Request,
  res: Response,
  run: { row: MissionRow; threadId: string; runId: string; sentMessageId: string | undefined; fresh: boolean },
): void {
  const encoder = new EventEncoder();
  res
    .status(200)
    .set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const send = (e: BaseEvent) => void res.write(encoder.encodeSSE(e));
  const ids = { threadId: run.threadId, runId: run.runId };
  send({ type: EventType.RUN_STARTED, ...ids } as BaseEvent);
  const translator = agUiTranslator({ runId: run.runId, sentMessageId: run.sentMessageId, send });
  let ended = false;
  const finish = async (end: RunEnd) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    translator.closeText();
    if (end.status === 'failed') send({ type: EventType.RUN_ERROR, message: end.message, code: end.code } as BaseEvent);
    else {
      const detail = await missionDetail(deps, await getMission(deps.db, run.row.id));
      const answer = detail.result?.text ?? '';
      if (!translator.streamed() && answer) {
        const messageId = `${run.runId}/answer`;
        send({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' } as BaseEvent);
        send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: answer } as BaseEvent);
        send({ type: EventType.TEXT_MESSAGE_END, messageId } as BaseEvent);
      }
      send({ type: EventType.RUN_FINISHED, ...ids, result: { missionId: run.row.id, status: detail.status, text: answer } } as BaseEvent);
    }
    res.end();
  };
  const fail = (message: string) => void finish({ status: 'failed', message, code: 'stream' });
  const unsubscribe = deps.relay.subscribe(run.row.id, {
    afterSeq: 0,
    fresh: run.fresh,
    onEvent: (e) => {
      const end = translator.onEvent(e);
      if (end) finish(end).catch(() => fail('the mission’s answer could not be read'));
    },
    onLive: (e) => translator.onLive(e),
    onEnd: (reason) => fail(reason === 'not_found' ? 'mission workflow not found' : 'the mission ended without an answer'),
  });
  // A client that drops its stream leaves the mission running: only the subscription goes.
  req.on('close', () => {
    ended = true;
    unsubscribe();
  });
}

/** The AG-UI input, checked with the protocol's own schema; each problem is a 400 naming its field. */
function parseInput(body: unknown) {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message }));
    throw new ValidationError(`not an AG-UI RunAgentInput: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, { fields });
  }
  if (!THREAD_ID.test(parsed.data.threadId))
    throw new ValidationError('threadId: letters, digits, "-" and "_", at most 128', {
      fields: [{ field: 'threadId', message: 'invalid' }],
    });
  return parsed.data;
}

/** The text of the last user message: the objective of a new thread, the message to a known one. */
function lastUserText(messages: Array<{ role: string; content?: unknown }>): string {
  const last = messages.filter((m) => m.role === 'user').at(-1);
  const text = last ? contentToText(last.content as Parameters<typeof contentToText>[0]).trim() : '';
  if (!text)
    throw new ValidationError('messages: a user message with text is required', {
      fields: [{ field: 'messages', message: 'no user text' }],
    });
  return text;
}

/** The skill a new thread runs: the one named, or the caller's only active skill. */
async function skillOf(deps: ApiDeps, owner: Principal, named: unknown): Promise<string> {
  if (typeof named === 'string' && named) return named;
  const active = await listOwnedSkills(deps.db, owner, 'active');
  if (active.length === 1) return active[0]!.name;
  throw new ValidationError('forwardedProps.skill: name the skill to run (you have ' + `${active.length} active skills)`, {
    fields: [{ field: 'forwardedProps.skill', message: 'required' }],
  });
}
