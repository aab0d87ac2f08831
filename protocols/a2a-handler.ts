import { randomUUID } from 'node:crypto';
import type {
  AgentCard,
  CancelTaskRequest,
  GetExtendedAgentCardRequest,
  GetTaskRequest,
  ListTasksRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import {
  DefaultExecutionEventBus,
  DefaultRequestHandler,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { ConflictError } from '../contracts/errors.ts';
import { findOwnedMission } from '../db/missions.ts';
import type { MissionRow } from '../db/schema.ts';
import { listOwnedSkills } from '../db/skills.ts';
import { cancelMission } from '../missions/cancel-mission.ts';
import { startMission } from '../missions/start-mission.ts';
import type { Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { sendMissionMessage } from '../server/mission-messages.ts';
import { callerCard, serviceCard } from './a2a-card.ts';
import { asA2AError, callerOf } from './a2a-caller.ts';
import { BEGUN, MissionExecutor, type Begun } from './a2a-executor.ts';
import { contextKey, contextOf, findContext, loadTask, MissionTaskStore } from './a2a-task-store.ts';

/** How long `CancelTask` waits for the mission to end before answering with the task as it is (still working). */
const CANCEL_WAIT_MS = 15_000;
const LIVE = ['queued', 'starting', 'running', 'idle'];

/**
 * The SDK's request handler on Cadenza's services. Before the SDK runs a message, this starts the mission through
 * `missions/start-mission.ts` (admission, limits and budgets as REST) or sends the message to the mission it continues
 * (`taskId`, or a `contextId` naming a session), so a refusal is a JSON-RPC error rather than a failed task; each call
 * checks its key's capability as the REST route would. Cancel goes through `missions/cancel-mission.ts`.
 */
export class CadenzaRequestHandler extends DefaultRequestHandler {
  private readonly deps: ApiDeps;
  constructor(deps: ApiDeps) {
    super(
      serviceCard(''),
      new MissionTaskStore(deps),
      new MissionExecutor(deps),
      new PerRequestBuses(),
      undefined,
      undefined,
      async (context: ServerCallContext): Promise<AgentCard> => {
        const caller = callerOf(context, 'skill.read');
        return callerCard(deps, caller.principal, caller.baseUrl);
      },
    );
    this.deps = deps;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.begin(params, context);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.begin(params, context);
    yield* super.sendMessageStream(params, context);
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    callerOf(context, 'mission.read');
    return super.getTask(params, context);
  }

  override async listTasks(params: ListTasksRequest, context: ServerCallContext) {
    callerOf(context, 'mission.read');
    return super.listTasks(params, context);
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    callerOf(context, 'mission.read');
    yield* super.resubscribe(params, context);
  }

  override async getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    callerOf(context, 'skill.read');
    return super.getAuthenticatedExtendedAgentCard(params, context);
  }

  /** Cancels the mission (from any API process: no event bus of this one is needed) and waits, bounded, for its end. */
  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const who = callerOf(context, 'mission.run').principal;
    const row = params.id ? await findOwnedMission(this.deps.db, who, params.id) : undefined;
    if (!row) throw new TaskNotFoundError(`Task not found: ${params.id}`);
    if (row.status !== 'cancelled') {
      if (!LIVE.includes(row.status)) throw new TaskNotCancelableError(`Task ${row.id} is ${row.status}: it cannot be canceled`);
      const outcome = await cancelMission(this.deps, row).catch((err: unknown) => {
        throw err instanceof ConflictError ? new TaskNotCancelableError(`Task ${row.id}: ${err.message}`) : asA2AError(err);
      });
      if (outcome === 'cancelling') await this.ended(row.id);
    }
    return (await loadTask(this.deps, who, row.id))!;
  }

  /**
   * Starts the mission a message asks for, or sends the message to the one it continues, and leaves it for the
   * executor. A new context (no `contextId`, or one naming none of the caller's missions) starts a session, so the
   * client continues it with the task's `contextId`; `metadata.session: false` runs one exchange that completes.
   */
  private async begin(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const who = callerOf(context, 'mission.run').principal;
    const message = params.message;
    if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
    const text = objectiveOf(message);
    const meta = (message.metadata ?? {}) as Record<string, unknown>;
    try {
      let begun: Begun;
      if (message.taskId) {
        const row = await findOwnedMission(this.deps.db, who, message.taskId);
        if (!row) throw new TaskNotFoundError(`Task not found: ${message.taskId}`);
        if (message.contextId && message.contextId !== contextOf(row))
          throw new RequestMalformedError(`contextId ${message.contextId} is not the context of task ${row.id} (${contextOf(row)})`);
        begun = await this.continueWith(row, who, message, text);
      } else {
        if (message.contextId && message.contextId.length > 200)
          throw new RequestMalformedError('message.contextId: at most 200 characters');
        const row = message.contextId ? await findContext(this.deps, who, message.contextId) : undefined;
        message.contextId ||= randomUUID();
        begun = row ? await this.continueWith(row, who, message, text) : await this.start(who, message, text, meta);
      }
      context.state.set(BEGUN, begun);
    } catch (err) {
      throw asA2AError(err);
    }
  }

  private async start(who: Principal, message: Message, objective: string, meta: Record<string, unknown>): Promise<Begun> {
    if (meta.session !== undefined && typeof meta.session !== 'boolean') throw new RequestMalformedError('metadata.session: true or false');
    if (meta.workspaceCode !== undefined && typeof meta.workspaceCode !== 'string')
      throw new RequestMalformedError('metadata.workspaceCode: a string');
    const { row } = await startMission(this.deps, who, {
      skill: await this.skillOf(who, meta.skill),
      objective,
      workspaceCode: (meta.workspaceCode as string | undefined) ?? 'a2a',
      session: meta.session !== false,
      idempotencyKey: contextKey(message.contextId),
    });
    return { row, who };
  }

  /** The message goes to the mission as `POST /missions/:id/messages` sends it; the same A2A messageId is the same message. */
  private async continueWith(row: MissionRow, who: Principal, message: Message, text: string): Promise<Begun> {
    if (!LIVE.includes(row.status))
      throw new UnsupportedOperationError(
        `task ${row.id} is ${row.status} and takes no more messages: send one without taskId and contextId to start a new task`,
      );
    const reply = await sendMissionMessage(this.deps, row, { text, mode: 'queue', idempotencyKey: `a2a:${message.messageId}` });
    return { row, who, messageId: reply.messageId };
  }

  /** The skill named in `metadata.skill`, else the caller's only active skill. */
  private async skillOf(who: Principal, named: unknown): Promise<string> {
    if (typeof named === 'string' && named.trim() !== '') return named;
    if (named !== undefined) throw new RequestMalformedError('metadata.skill: the name of one of your skills');
    const active = await listOwnedSkills(this.deps.db, who, 'active');
    if (active.length === 1) return active[0]!.name;
    if (active.length === 0) throw new RequestMalformedError('no skill to run: this key’s user has no active skill');
    const names = active.slice(0, 10).map((s) => s.name);
    throw new RequestMalformedError(`metadata.skill: name the skill to run, one of ${names.join(', ')}${active.length > 10 ? ', …' : ''}`);
  }

  private ended(missionId: string): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(finish, CANCEL_WAIT_MS);
      const unsubscribe = this.deps.relay.subscribe(missionId, { afterSeq: 0, onEvent: () => {}, onEnd: () => finish() });
      function finish() {
        clearTimeout(timer);
        queueMicrotask(() => unsubscribe());
        done();
      }
    });
  }
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

/**
 * One event bus per call, never shared: the mission is the durable state and the relay fans its events out, so no
 * bus needs to outlive its call or be found again by task id (`CancelTask` is ours and needs none).
 */
class PerRequestBuses implements ExecutionEventBusManager {
  createOrGetByTaskId(): ExecutionEventBus {
    return new DefaultExecutionEventBus();
  }
  getByTaskId(): undefined {
    return undefined;
  }
  cleanupByTaskId(): void {}
}
