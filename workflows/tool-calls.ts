import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../contracts/activities.ts';
import { storeOptions, toolOptions } from './activity-options.ts';
import {
  TOOL_CALL_FINISHED,
  TOOL_CALL_NOT_FOUND,
  type MissionPlan,
  type ModelTurnResult,
  type ToolCallEnd,
  type ToolCallInput,
  type ToolCancelReply,
  type ToolOutcome,
  type ToolUse,
} from '../contracts/mission.ts';
import { describeFailure } from './failures.ts';
import { createFactoryCalls } from './factory-call.ts';
import { createDelegateCalls, type DelegationBudget } from './delegate-call.ts';
import type { EventLog } from './event-log.ts';
import type { Approvals } from './approvals.ts';
import type { ClientCalls } from './client-call.ts';

const store = proxyActivities<MissionActivities>(storeOptions);
/** The bounds of storing a client tool's result (the tool's own timeout is its deadline, spent waiting). */
const CLIENT_RECORD = { timeoutS: 30, retries: 0 };

/**
 * A mission's tool calls: each in its own cancellation scope, cancellable one by one (the `cancelTool` update).
 * `toolTaskQueue` is the queue of the tool worker.
 */
export function createToolCalls(opts: {
  missionId: string;
  modelTaskQueue: string;
  eventLog: EventLog;
  toolTaskQueue: string;
  approvals: Approvals;
  clientCalls: ClientCalls;
  budget: DelegationBudget;
}) {
  const { missionId, eventLog } = opts;
  const factory = createFactoryCalls(opts);
  const delegate = createDelegateCalls(opts);
  const scopes = new Map<string, CancellationScope>();

  /** Feed rows for calls whose activity could not write them: never run, cancelled while waiting, every attempt dead. */
  async function recordEnds(ends: ToolCallEnd[]): Promise<void> {
    if (ends.length === 0) return;
    // Not cancellable: the mission may be cancelled meanwhile, and the feed must still say how the call ended.
    await CancellationScope.nonCancellable(() =>
      store.recordToolEnds.executeWithOptions({ summary: 'record tool ends' }, [{ missionId, ends }]),
    );
  }

  /**
   * `delegates`: how many of the turn's calls are `delegate` calls (they share what is left of the budget). `embedId`:
   * the invocation's own id, the model call's; `switches`: the app switches read by the statement that wrote this call's
   * start with the reply (absent: the call writes its start when it runs).
   */
  async function run(
    plan: MissionPlan,
    toolUse: ToolUse,
    turn: number,
    delegates: number,
    embedId: string,
    switches: Record<string, boolean> | undefined,
  ): Promise<ToolOutcome> {
    const spec = plan.tools.find((t) => t.modelName === toolUse.name);
    const needsApproval = spec !== undefined && opts.approvals.required(spec);
    if (needsApproval) opts.approvals.request(toolUse, spec.qualifiedName, turn, plan.approvalTimeoutS, embedId);
    else eventLog.toolStarted(toolUse.id, spec?.qualifiedName ?? toolUse.name, turn, embedId);
    const endHere = async (status: ToolOutcome['status'], error?: string): Promise<ToolOutcome> => {
      const ended = eventLog.toolEnded(toolUse.id, status, error);
      if (ended) await recordEnds([ended]);
      return { toolUseId: toolUse.id, status, ...(error ? { error } : {}) };
    };
    if (!spec) return endHere('error', `unknown tool ${toolUse.name}`);
    // A client tool's result is only stored: bounded by the store's own time, not by the tool's (long) deadline.
    const { runTool } = proxyActivities<MissionActivities>(toolOptions(spec.client ? CLIENT_RECORD : spec, opts.toolTaskQueue));
    const runActivity = (call: ToolUse, reply?: ToolCallInput['reply']) =>
      runTool.executeWithOptions({ summary: `tool ${spec.qualifiedName}`, activityId: `tool-${turn}-${toolUse.id}` }, [
        {
          missionId,
          turn,
          toolUse: call,
          qualifiedName: spec.qualifiedName,
          timeoutS: spec.timeoutS,
          retries: spec.retries,
          embedId,
          ...(reply ? { reply } : {}),
          // Read with the reply, which starts only the calls that run at once (`startsWithReply`: the branch below).
          ...(switches ? { switches } : {}),
        },
      ]);
    const scope = new CancellationScope();
    scopes.set(toolUse.id, scope);
    try {
      // Waits for a person first when the tool needs approval; a denied call never runs.
      const gate = needsApproval
        ? await scope.run(() => opts.approvals.wait(toolUse, spec.qualifiedName, turn, plan.approvalTimeoutS))
        : undefined;
      if (gate && !gate.approved) return await endHere('denied', gate.text);
      const call = gate ? { ...toolUse, input: gate.input } : toolUse;
      const running = scope.run(() =>
        factory.handles(spec.qualifiedName)
          ? factory.run(call, turn, embedId)
          : delegate.handles(spec.qualifiedName)
            ? delegate.run(plan, call, turn, embedId, delegates)
            : spec.client
              ? opts.clientCalls.wait(call, spec.qualifiedName, turn, spec.timeoutS).then((reply) => runActivity(call, reply))
              : runActivity(call),
      );
      const result = await running;
      if (gate) await gate.recorded; // started with the tool: already done, or nearly
      // The activity wrote this call's feed end itself.
      eventLog.toolEnded(toolUse.id, result.status, result.error, result.embed);
      return {
        ...{ toolUseId: toolUse.id, status: result.status },
        ...(result.error ? { error: result.error } : {}),
        ...(result.stamp ? { stamp: result.stamp } : {}),
      };
    } catch (err) {
      // The mission is being cancelled: it ends every running call itself, once all have settled.
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      // Only this call's scope was cancelled: the mission goes on.
      if (isCancellation(err)) return endHere('cancelled');
      return endHere('error', describeFailure(err));
    } finally {
      scopes.delete(toolUse.id);
    }
  }

  return {
    /** Runs one turn's calls in parallel; results in the model's order. Rejects only once every call has settled. */
    async runTurn(
      plan: MissionPlan,
      reply: Pick<ModelTurnResult, 'toolUses' | 'embedIds' | 'starts'>,
      turn: number,
    ): Promise<ToolOutcome[]> {
      const { toolUses, starts } = reply;
      const delegates = toolUses.filter((tu) =>
        delegate.handles(plan.tools.find((t) => t.modelName === tu.name)?.qualifiedName ?? ''),
      ).length;
      // Each call's embed id is the model call's (derived from mission, turn and tool-use id: the same on every attempt).
      // A result without them is a bug: a plain Error fails the workflow task, not the mission (docs/decisions.md).
      const { embedIds } = reply;
      if (embedIds?.length !== toolUses.length) throw new Error(`the model call's result names no embed id for each tool use`);
      const settled = await Promise.allSettled(
        toolUses.map((tu, i) =>
          run(plan, tu, turn, delegates, embedIds[i]!, starts?.toolUseIds.includes(tu.id) ? starts.switches : undefined),
        ),
      );
      const rejected = settled.find((s) => s.status === 'rejected');
      if (rejected) throw rejected.reason;
      return settled.map((s) => (s as PromiseFulfilledResult<ToolOutcome>).value);
    },
    /** The update's validator: refuses (no history written) a call that is unknown or already over; by either id. */
    validateCancel(id: string): void {
      const status = eventLog.toolStatus(id);
      if (status === undefined) throw ApplicationFailure.create({ type: TOOL_CALL_NOT_FOUND, message: `no tool call ${id}` });
      if (status !== 'running' && status !== 'awaiting_approval')
        throw ApplicationFailure.create({ type: TOOL_CALL_FINISHED, message: `tool call already ${status}` });
    },
    /** Cancels the call named by its tool-use id or its embed id. */
    cancel(id: string): ToolCancelReply {
      const toolUseId = eventLog.toolUseIdOf(id) ?? id;
      const embedId = eventLog.embedIdOf(id);
      scopes.get(toolUseId)?.cancel();
      return { toolUseId, ...(embedId ? { embedId } : {}), status: 'cancelling' };
    },
    /** Cancels every running call (an interrupt with `cancelTools`); each ends `cancelled` and the mission goes on. */
    cancelRunning(): string[] {
      for (const scope of scopes.values()) scope.cancel();
      return [...scopes.keys()];
    },
    /** The mission is ending: every call still running ends now, on the event log and in the feed. */
    async endRunning(status: 'cancelled' | 'error', error?: string): Promise<void> {
      await recordEnds(eventLog.endRunningTools(status, error));
    },
  };
}
