import { ChildWorkflowCancellationType, executeChild, setHandler } from '@temporalio/workflow';
import { CREATE_SCRIPT } from '../contracts/script-factory.ts';
import type { ToolCallResult, ToolUse } from '../contracts/mission.ts';
import { factoryProgressSignal, scriptFactoryWorkflowId } from '../contracts/script-factory.ts';
import type { EventLog } from './event-log.ts';
import { scriptFactoryWorkflow } from './script-factory.ts';

/**
 * create_script calls of a mission: each runs as a child workflow (the factory) instead of a tool activity, inside the
 * call's cancellation scope. The child's attempts arrive by signal and go on the event log as `tool_attempt`.
 */
export function createFactoryCalls(opts: { missionId: string; modelTaskQueue: string; eventLog: EventLog }) {
  setHandler(factoryProgressSignal, (p) => opts.eventLog.emit({ type: 'tool_attempt', ...p }));
  return {
    handles: (qualifiedName: string): boolean => qualifiedName === `system.${CREATE_SCRIPT}`,
    run(toolUse: ToolUse, turn: number, embedId: string): Promise<ToolCallResult> {
      return executeChild(scriptFactoryWorkflow, {
        workflowId: scriptFactoryWorkflowId(opts.missionId, turn, toolUse.id),
        args: [{ missionId: opts.missionId, turn, toolUseId: toolUse.id, modelTaskQueue: opts.modelTaskQueue, embedId }],
        // The tool's cancel waits for the child to end, so its sandbox is gone before the call is reported cancelled.
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        staticSummary: `script factory · ${String(toolUse.input.skill)}/${String(toolUse.input.name)}`,
      });
    },
  };
}
