import { randomUUID } from 'node:crypto';
import type { Message, SendMessageRequest } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { findOwnedMission } from '../db/missions.ts';
import type { MissionRow } from '../db/schema.ts';
import { listOwnedSkills } from '../db/skills.ts';
import { startMission } from '../missions/start-mission.ts';
import type { Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { sendMissionMessage } from '../server/mission-messages.ts';
import { asA2AError, callerOf } from './a2a-caller.ts';
import type { Begun } from './a2a-executor.ts';
import { contextKey, contextOf, findContext } from './a2a-task-store.ts';

/** A mission that has not ended takes messages. */
export const LIVE = ['queued', 'starting', 'running', 'idle'];

/**
 * Starts the mission a message asks for (through `missions/start-mission.ts`: admission, limits and budgets as REST), or
 * sends the message to the one it continues (`taskId`, or a `contextId` naming a session); the executor follows it. A new context (no `contextId`, or one naming none of the caller's missions) starts a session, so the
 * client continues it with the task's `contextId`; `metadata.session: false` runs one exchange that completes.
 */
export async function beginMission(deps: ApiDeps, params: SendMessageRequest, context: ServerCallContext): Promise<Begun> {
  const who = callerOf(context, 'mission.run').principal;
  const message = params.message;
  if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
  const text = objectiveOf(message);
  const meta = (message.metadata ?? {}) as Record<string, unknown>;
  try {
    if (message.taskId) {
      const row = await findOwnedMission(deps.db, who, message.taskId);
      if (!row) throw new TaskNotFoundError(`Task not found: ${message.taskId}`);
      if (message.contextId && message.contextId !== contextOf(row))
        throw new RequestMalformedError(`contextId ${message.contextId} is not the context of task ${row.id} (${contextOf(row)})`);
      return await continueWith(deps, row, who, message, text);
    }
    if (message.contextId && message.contextId.length > 200) throw new RequestMalformedError('message.contextId: at most 200 characters');
    const row = message.contextId ? await findContext(deps, who, message.contextId) : undefined;
    message.contextId ||= randomUUID();
    return row ? await continueWith(deps, row, who, message, text) : await start(deps, who, message, text, meta);
  } catch (err) {
    throw asA2AError(err);
  }
}

async function start(deps: ApiDeps, who: Principal, message: Message, objective: string, meta: Record<string, unknown>): Promise<Begun> {
  if (meta.session !== undefined && typeof meta.session !== 'boolean') throw new RequestMalformedError('metadata.session: true or false');
  if (meta.workspaceCode !== undefined && typeof meta.workspaceCode !== 'string')
    throw new RequestMalformedError('metadata.workspaceCode: a string');
  const { row } = await startMission(deps, who, {
    skill: await skillOf(deps, who, meta.skill),
    objective,
    workspaceCode: (meta.workspaceCode as string | undefined) ?? 'a2a',
    session: meta.session !== false,
    idempotencyKey: contextKey(message.contextId),
  });
  return { row, who };
}

/** The message goes to the mission as `POST /missions/:id/messages` sends it; the same A2A messageId is the same message. */
async function continueWith(deps: ApiDeps, row: MissionRow, who: Principal, message: Message, text: string): Promise<Begun> {
  if (!LIVE.includes(row.status))
    throw new UnsupportedOperationError(
      `task ${row.id} is ${row.status} and takes no more messages: send one without taskId and contextId to start a new task`,
    );
  const reply = await sendMissionMessage(deps, row, { text, mode: 'queue', idempotencyKey: `a2a:${message.messageId}` });
  return { row, who, messageId: reply.messageId };
}

/** The skill named in `metadata.skill`, else the caller's only active skill. */
async function skillOf(deps: ApiDeps, who: Principal, named: unknown): Promise<string> {
  if (typeof named === 'string' && named.trim() !== '') return named;
  if (named !== undefined) throw new RequestMalformedError('metadata.skill: the name of one of your skills');
  const active = await listOwnedSkills(deps.db, who, 'active');
  if (active.length === 1) return active[0]!.name;
  if (active.length === 0) throw new RequestMalformedError('no skill to run: this key’s user has no active skill');
  const names = active.slice(0, 10).map((s) => s.name);
  throw new RequestMalformedError(`metadata.skill: name the skill to run, one of ${names.join(', ')}${active.length > 10 ? ', …' : ''}`);
}

/** The objective: the message's text parts, in order. */
function objectiveOf(message: Message): string {
  const texts = message.parts.map((p, i) => {
    if (p.content?.$case !== 'text')
      throw new RequestMalformedError(`message.parts[${i}]: only text parts are read (this one is ${p.content?.$case ?? 'empty'})`);
    return p.content.value;
  });
  const text = texts.join('\n').trim();
  if (!text) throw new RequestMalformedError('message: a text part with the objective is required');
  return text;
}
