import { ApplicationFailure, Context } from '@temporalio/activity';
import { putToolCall } from '../db/transcript.ts';
import { executeHttpTool } from '../tools/http-executor.ts';
import type { ToolCallInput, ToolCallResult } from '../workflows/definitions.ts';
import { withHeartbeat } from './heartbeat.ts';
import type { ActivityDeps } from './index.ts';

/** The tool activity: runs one tool call over HTTP, stores its output in Postgres, returns only its status. */
export function createToolActivity({ db, registry, env }: ActivityDeps) {
  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const tool = registry.getTool(input.qualifiedName);
      if (!tool) throw ApplicationFailure.nonRetryable(`tool ${input.qualifiedName} is not installed`, 'ToolMissing');
      const info = Context.current().info;
      const started = Date.now();
      // The workflow id and tool-use id name the call, so a tool server can drop a retried duplicate.
      const idempotencyKey = `${info.workflowExecution?.workflowId ?? input.missionId}/${input.toolUse.id}`;
      const outcome = await withHeartbeat(1_000, (signal) =>
        executeHttpTool(tool, input.toolUse.input, { signal, idempotencyKey, ...(env ? { env } : {}) }),
      );
      const durationMs = Date.now() - started;
      await putToolCall(db, {
        missionId: input.missionId,
        toolUseId: input.toolUse.id,
        tool: input.qualifiedName,
        status: outcome.ok ? 'completed' : 'error',
        output: outcome.ok ? outcome.result : outcome.error,
        durationMs,
        attempt: info.attempt,
      });
      return outcome.ok ? { status: 'completed', durationMs } : { status: 'error', durationMs, error: outcome.error.slice(0, 300) };
    },
  };
}
