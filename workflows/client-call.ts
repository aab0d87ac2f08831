import { ApplicationFailure, condition } from '@temporalio/workflow';
import { CLIENT_CALL_NOT_WAITING, type ClientToolReply, type ClientToolResult } from '../contracts/client-tools.ts';
import { TOOL_CALL_NOT_FOUND, type ToolCallInput, type ToolUse } from '../contracts/mission.ts';
import type { EventLog } from './event-log.ts';

type Reply = NonNullable<ToolCallInput['reply']>;

/**
 * The calls of tools the mission's caller runs. Each waits in the workflow itself (a condition with the tool's deadline
 * as its timeout, rebuilt on replay: no activity is held and a worker's death loses nothing) until the `toolResult`
 * update brings its result; the wait runs in the call's cancellation scope, so the per-tool cancel ends it.
 */
export function createClientCalls(opts: { eventLog: EventLog }) {
  // The result of each waiting call, set by the update handler, read by the waiting condition.
  const waiting = new Map<string, ClientToolResult | undefined>();
  return {
    /** Announces the call (`client_tool_call`) and waits for its result; past the deadline, an error the model sees. */
    async wait(call: ToolUse, tool: string, turn: number, timeoutS: number): Promise<Reply> {
      const deadline = new Date(Date.now() + timeoutS * 1000).toISOString();
      opts.eventLog.emit({ type: 'client_tool_call', toolUseId: call.id, tool, turn, input: call.input, deadline });
      waiting.set(call.id, undefined);
      try {
        const arrived = await condition(() => waiting.get(call.id) !== undefined, timeoutS * 1000);
        const result = waiting.get(call.id);
        if (!arrived || !result)
          return { ok: false, error: `no result from the caller within ${timeoutS} s (the tool's deadline); carry on without it` };
        return 'error' in result ? { ok: false, error: result.error } : { ok: true, result: result.output };
      } finally {
        waiting.delete(call.id);
      }
    },

    /** The update's validator: refuses, writing no history, a call that is unknown or waits for no result. */
    validate(toolUseId: string, result: ClientToolResult): void {
      if (!waiting.has(toolUseId)) {
        if (opts.eventLog.toolStatus(toolUseId) === undefined)
          throw ApplicationFailure.create({ type: TOOL_CALL_NOT_FOUND, message: `no tool call ${toolUseId}` });
        throw ApplicationFailure.create({ type: CLIENT_CALL_NOT_WAITING, message: `tool call ${toolUseId} is not waiting for a result` });
      }
      if (waiting.get(toolUseId) !== undefined)
        throw ApplicationFailure.create({ type: CLIENT_CALL_NOT_WAITING, message: `tool call ${toolUseId} has its result already` });
      if (!('output' in result) && typeof (result as { error?: unknown }).error !== 'string')
        throw ApplicationFailure.create({ type: 'InvalidToolResult', message: 'a result is {output} or {error}' });
    },

    deliver(toolUseId: string, result: ClientToolResult): ClientToolReply {
      waiting.set(toolUseId, result);
      return { toolUseId, status: 'error' in result ? 'error' : 'completed' };
    },
  };
}
export type ClientCalls = ReturnType<typeof createClientCalls>;
