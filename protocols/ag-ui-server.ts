import { contentToText } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { Router } from 'express';
import { z } from 'zod';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../contracts/errors.ts';
import { findOwnedMission, missionIdTaken } from '../db/missions.ts';
import { listOwnedSkills } from '../db/skills.ts';
import type { MissionRow } from '../db/schema.ts';
import { startMission } from '../missions/start-mission.ts';
import { authenticate, principal, requireCapability, type Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { sendMissionMessage } from '../server/mission-messages.ts';
import { routeGroup } from '../server/openapi/route-doc.ts';
import { streamRun } from './ag-ui-stream.ts';
import { listMissionEmbeds } from '../db/embeds.ts';

// A thread id becomes a mission id, which every other face (REST, its cursors, the OpenAPI document) knows as a UUID.
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const runInput = z.looseObject({
  threadId: z.string().describe('The session’s mission id: a new id starts a session with that id, a known one continues it'),
  runId: z.string().describe('This run; the same run sent again (with Last-Event-ID) resumes its stream and sends nothing twice'),
  messages: z.array(z.looseObject({ role: z.string() })).describe('The objective (or the next message) is the last user message'),
  forwardedProps: z
    .looseObject({ skill: z.string().optional(), workspaceCode: z.string().optional() })
    .optional()
    .describe('A new thread’s `skill` (default: your only active skill) and `workspaceCode` (default "ag-ui")'),
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
    const runKey = `ag-ui/${input.runId}`;
    let row: MissionRow;
    let sentMessageId: string | undefined;
    if (thread) {
      row = thread;
      // A run retried (a resumed stream) sends nothing again: the run that started the thread, or the same message.
      if (row.idempotency_key !== runKey)
        sentMessageId = (await sendMissionMessage(deps, row, { text: objective, mode: 'queue', idempotencyKey: runKey })).messageId;
    } else {
      // Someone else's thread is as missing as one that never was; its id cannot start another session.
      if (await missionIdTaken(deps.db, input.threadId)) throw new NotFoundError(`threadId: no thread ${input.threadId}`);
      const props = (input.forwardedProps ?? {}) as { skill?: unknown; workspaceCode?: unknown };
      const skill = await skillOf(deps, owner, props.skill);
      const workspaceCode = typeof props.workspaceCode === 'string' && props.workspaceCode ? props.workspaceCode : 'ag-ui';
      ({ row } = await startMission(deps, owner, {
        ...{ id: input.threadId, skill, objective, workspaceCode, session: true, idempotencyKey: runKey },
      }).catch(async (err: unknown) => {
        // Two first runs of one new thread at once: the second finds its id taken by the first.
        if (!(err instanceof DomainError) && (await missionIdTaken(deps.db, input.threadId)))
          throw new ConflictError(`threadId: thread ${input.threadId} is starting: retry the run`);
        throw err;
      }));
    }
    const embeds = thread ? await listMissionEmbeds(deps.db, row.id) : [];
    const ids = { threadId: input.threadId, runId: input.runId };
    streamRun(deps, req, res, { row, ...ids, sentMessageId, fresh: !thread, embeds, clientState: input.state });
  });
  return router;
}

/** The AG-UI input, checked with the protocol's own schema; each problem is a 400 naming its field. */
function parseInput(body: unknown) {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message }));
    throw new ValidationError(`not an AG-UI RunAgentInput: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, { fields });
  }
  if (!THREAD_ID.test(parsed.data.threadId))
    throw new ValidationError('threadId: a UUID (it is the mission id)', {
      fields: [{ field: 'threadId', message: 'must be a UUID' }],
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
