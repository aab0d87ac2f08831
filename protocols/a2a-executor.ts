import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionRow } from '../db/schema.ts';
import type { Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { progressOf } from './mcp-tools.ts';
import { agentMessage, loadTask, stateOf } from './a2a-task-store.ts';

/**
 * What the request handler began before the SDK runs the executor: the mission, and where its exchange starts in the
 * mission's events: after the message it continues with, or (a re-subscription) after the `idle` of the exchanges
 * already answered; else from the mission's start.
 */
export type Begun = { row: MissionRow; who: Principal; messageId?: string; answered?: number };
/** Where the handler leaves it for the executor: the call's own `ServerCallContext` state. */
export const BEGUN = 'cadenza.a2a.begun';

const ENDS = new Set(['completed', 'failed', 'cancelled']);

/**
 * The SDK's agent executor: the mission is already started (or the message already sent to it) by the request
 * handler, so executing is following the mission's own event stream (the relay the SSE route reads) until the
 * exchange answers (`idle`) or the mission ends, as A2A task and status events; the answer goes as an artifact. A
 * client that drops its stream stops nothing: the mission outlives its caller.
 */
export class MissionExecutor implements AgentExecutor {
  private readonly deps: Pick<ApiDeps, 'db' | 'temporal' | 'relay'>;
  constructor(deps: Pick<ApiDeps, 'db' | 'temporal' | 'relay'>) {
    this.deps = deps;
  }

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    await this.run(request.context.state.get(BEGUN) as Begun, request.contextId, bus);
  }

  /** Publishes the task, then its exchange's progress, answer and final state, as the mission's events say them. */
  async run(begun: Begun, contextId: string, bus: ExecutionEventBus): Promise<void> {
    const ids = { id: begun.row.id, contextId };
    const task: Task = {
      ...ids,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    const status = (state: TaskState, said?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: ids.id,
          contextId: ids.contextId,
          status: { state, message: said === undefined ? undefined : agentMessage(ids, said), timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
    const endedAs = await this.follow(begun, (e) => {
      if (e.type === 'status') return status(stateOf(e.status));
      const said = e.type === 'approval_requested' ? approvalNote(begun.row.id, e) : progressOf(e);
      if (said) status(TaskState.TASK_STATE_WORKING, said);
    });
    // The exchange's end as the mission records it: its answer, then its final state (the state the stream ended on).
    const final = await loadTask(this.deps, begun.who, ids.id);
    const answered = endedAs === 'idle' || endedAs === 'completed';
    const last = final?.artifacts.at(-1);
    if (answered && last)
      bus.publish(
        AgentEvent.artifactUpdate({ ...ids, taskId: ids.id, artifact: last, append: false, lastChunk: true, metadata: undefined }),
      );
    const state = endedAs ? stateOf(endedAs) : (final?.status?.state ?? TaskState.TASK_STATE_FAILED);
    status(state, final?.status?.message?.parts[0]?.content?.$case === 'text' ? final.status.message.parts[0].content.value : undefined);
  }

  /** The cancel goes through the request handler's `cancelTask` (missions/cancel-mission.ts); nothing runs here. */
  async cancelTask(): Promise<void> {}

  /**
   * Relays the mission's events from the start of this exchange (a continued session: from its message's delivery)
   * until it answers or ends; resolves with the status it ended on (undefined: the stream ended without saying).
   */
  private follow(begun: Begun, onEvent: (e: MissionEvent) => void): Promise<string | undefined> {
    return new Promise((done) => {
      let ours = begun.messageId === undefined && !begun.answered;
      let idles = 0;
      let settled = false;
      let unsubscribe: (() => void) | undefined = undefined;
      const settle = (status: string | undefined) => {
        if (settled) return;
        settled = true;
        unsubscribe?.();
        done(status);
      };
      unsubscribe = this.deps.relay.subscribe(begun.row.id, {
        afterSeq: 0,
        fresh: ours,
        onEvent: (e) => {
          if (settled) return;
          if (e.type === 'status' && ENDS.has(e.status)) return settle(e.status);
          if (!ours) {
            if (e.type === 'status' && e.status === 'idle') idles++;
            ours = begun.messageId ? e.type === 'message' && e.messageId === begun.messageId : idles === begun.answered;
            return;
          }
          if (e.type === 'status' && e.status === 'idle') return settle('idle');
          onEvent(e);
        },
        onEnd: () => settle(undefined),
      });
      // Events the relay had already read may have ended it during the subscription itself.
      if (settled) unsubscribe();
    });
  }
}

function approvalNote(missionId: string, e: Extract<MissionEvent, { type: 'approval_requested' }>): string {
  return `${e.tool} waits for approval: POST /api/v1/missions/${missionId}/tools/${e.toolUseId}/approve (or /deny)`;
}
