import { Context } from '@temporalio/activity';
import { recordFeedEvent } from '../db/feed.ts';
import { putToolCall } from '../db/transcript.ts';
import { executeHttpTool, type ToolOutcome } from '../tools/http-executor.ts';
import type { ToolCallInput, ToolCallResult } from '../workflows/definitions.ts';
import { withHeartbeat } from './heartbeat.ts';
import { getMission } from '../db/missions.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import type { ActivityDeps } from './deps.ts';
import { resolveToolAccess } from './tool-access.ts';

/** The tool activity: runs one tool call (system or HTTP), stores its output in Postgres, returns only its status. */
export function createToolActivity(deps: ActivityDeps) {
  const { db, registry, systemTools, embeddings, env, logger } = deps;
  /** One call of a system tool (built in) or of an app's HTTP tool. */
  async function execute(input: ToolCallInput, signal: AbortSignal): Promise<ToolOutcome> {
    if (input.qualifiedName.startsWith(`${SYSTEM_APP_ID}.`)) {
      const mission = await getMission(db, input.missionId);
      return systemTools.run(input.qualifiedName, input.toolUse.input, {
        db,
        mission,
        signal,
        logger,
        toolUseId: input.toolUse.id,
        turn: input.turn ?? 0,
        embeddings,
      });
    }
    const tool = registry.getTool(input.qualifiedName);
    if (!tool) return { ok: false, error: `tool became unavailable: ${input.qualifiedName} is not installed on this worker` };
    const access = await resolveToolAccess(deps, input.missionId, tool);
    if (!access.ok) return { ok: false, error: access.error };
    // The workflow id and tool-use id name the call, so a tool server can drop a retried duplicate.
    const idempotencyKey = `${Context.current().info.workflowExecution?.workflowId ?? input.missionId}/${input.toolUse.id}`;
    return executeHttpTool(tool, input.toolUse.input, { signal, idempotencyKey, env, providerKeys: access.providerKeys });
  }

  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const info = Context.current().info;
      const started = Date.now();
      const feed = { missionId: input.missionId, tool: input.qualifiedName, toolUseId: input.toolUse.id };
      const endKey = `${input.missionId}/tool/${input.toolUse.id}/end`;
      await recordFeedEvent(db, { ...feed, eventKey: `${input.missionId}/tool/${input.toolUse.id}/start`, kind: 'tool_start' });
      let outcome: ToolOutcome;
      try {
        outcome = await withHeartbeat(1_000, (signal) => execute(input, signal));
      } catch (err) {
        // One end row per call: a later attempt replaces this one with its own outcome.
        const cancelled = Context.current().cancellationSignal.aborted;
        await recordFeedEvent(
          db,
          {
            ...feed,
            eventKey: endKey,
            kind: 'tool_end',
            outcome: cancelled ? 'cancelled' : 'error',
            durationMs: Date.now() - started,
            ...(cancelled ? {} : { error: describe(err) }),
          },
          { replace: true },
        ).catch((e: unknown) => logger.warn('could not record the tool end in the feed', { err: String(e) }));
        throw err;
      }
      const durationMs = Date.now() - started;
      await putToolCall(db, {
        missionId: input.missionId,
        turn: input.turn ?? 0,
        toolUseId: input.toolUse.id,
        tool: input.qualifiedName,
        status: outcome.ok ? 'completed' : 'error',
        output: outcome.ok ? outcome.result : outcome.error,
        durationMs,
        attempt: info.attempt,
      });
      const error = outcome.ok ? undefined : outcome.error.slice(0, 300);
      await recordFeedEvent(
        db,
        {
          ...feed,
          eventKey: endKey,
          kind: 'tool_end',
          outcome: error === undefined ? 'completed' : 'error',
          durationMs,
          ...(error !== undefined ? { error } : {}),
        },
        { replace: true },
      );
      return error === undefined ? { status: 'completed', durationMs } : { status: 'error', durationMs, error };
    },
  };
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);
