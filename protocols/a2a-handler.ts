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
import { TaskState } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBus,
  DefaultRequestHandler,
  ExecutionEventQueue,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { ConflictError } from '../contracts/errors.ts';
import { findOwnedMission } from '../db/missions.ts';
import { cancelMission } from '../missions/cancel-mission.ts';
import type { ApiDeps } from '../server/deps.ts';
import { beginMission, LIVE } from './a2a-begin.ts';
import { callerCard, serviceCard } from './a2a-card.ts';
import { asA2AError, callerOf } from './a2a-caller.ts';
import { BEGUN, MissionExecutor } from './a2a-executor.ts';
import { loadTask, MissionTaskStore } from './a2a-task-store.ts';

/** How long `CancelTask` waits for the mission to end before answering with the task as it is (still working). */
const CANCEL_WAIT_MS = 15_000;

/**
 * The SDK's request handler on Cadenza's services. Before the SDK runs a message, this starts the mission through
 * `missions/start-mission.ts` (admission, limits and budgets as REST) or sends the message to the mission it continues
 * (`taskId`, or a `contextId` naming a session), so a refusal is a JSON-RPC error rather than a failed task; each call
 * checks its key's capability as the REST route would. Cancel goes through `missions/cancel-mission.ts`.
 */
export class CadenzaRequestHandler extends DefaultRequestHandler {
  private readonly deps: ApiDeps;
  private readonly executor: MissionExecutor;
  constructor(deps: ApiDeps, executor = new MissionExecutor(deps)) {
    super(
      serviceCard(''),
      new MissionTaskStore(deps),
      executor,
      new PerRequestBuses(),
      undefined,
      undefined,
      async (context: ServerCallContext): Promise<AgentCard> => {
        const caller = callerOf(context, 'skill.read');
        return callerCard(deps, caller.principal, caller.baseUrl);
      },
    );
    this.deps = deps;
    this.executor = executor;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    context.state.set(BEGUN, await beginMission(this.deps, params, context));
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    context.state.set(BEGUN, await beginMission(this.deps, params, context));
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

  /**
   * A client re-attaches to a running task (its stream dropped, or another client): the task, then the rest of its
   * exchange from the mission's relay, as a sent message's stream has it. Nothing needs this process's event bus.
   */
  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const who = callerOf(context, 'mission.read').principal;
    const row = params.id ? await findOwnedMission(this.deps.db, who, params.id) : undefined;
    if (!row) throw new TaskNotFoundError(`Task not found: ${params.id}`);
    const task = (await loadTask(this.deps, who, row.id))!;
    if (!LIVE.includes(row.status))
      throw new UnsupportedOperationError(`Task ${row.id} is ${row.status}: there is nothing to subscribe to`);
    // A session that answered has nothing running: its task is all there is.
    if (task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) return yield { payload: { $case: 'task', value: task } };
    const bus = new DefaultExecutionEventBus();
    const queue = new ExecutionEventQueue(bus);
    void this.executor.run({ row, who, answered: task.artifacts.length }, task.contextId, bus).finally(() => bus.finished());
    try {
      for await (const e of queue.events()) {
        if (e.kind === 'task') yield { payload: { $case: 'task', value: (await loadTask(this.deps, who, row.id)) ?? e.data } };
        else if (e.kind === 'statusUpdate') yield { payload: { $case: 'statusUpdate', value: e.data } };
        else if (e.kind === 'artifactUpdate') yield { payload: { $case: 'artifactUpdate', value: e.data } };
      }
    } finally {
      queue.stop();
    }
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
