import { ApplicationFailure, Context } from '@temporalio/activity';
import { recordToolFeed } from '../db/feed.ts';
import { putToolCall } from '../db/transcript.ts';
import { endToolCall, startToolCall } from '../db/tool-call-records.ts';
import { executeHttpTool, type ToolReply } from '../tools/http-executor.ts';
import type { ToolCallEnd, ToolCallInput, ToolCallResult } from '../contracts/mission.ts';
import { toolRetryDelayMs } from '../contracts/tool-tries.ts';
import { withHeartbeat } from './heartbeat.ts';
import { advanceCheckpoint, beat, readCheckpoint } from './checkpoint.ts';
import { answerOnce } from './kept-answer.ts';
import { withAnnouncedCancel } from './announced-cancel.ts';
import { getMission } from '../db/missions.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import { RUN_SKILL_SCRIPT } from '../tools/system/run-skill-script.ts';
import type { ActivityDeps } from './deps.ts';
import { scrubAddresses } from '../lib/scrub-addresses.ts';
import { resolveToolAccess } from './tool-access.ts';
import { callMcpTool } from './mcp-call.ts';
import { embedCallOf, embedEndOf, finishEmbed } from './tool-embeds.ts';
import { endEmbed } from '../db/embeds.ts';
import { embedStatusOf } from '../contracts/embeds.ts';
import type { MissionFactsCache } from './mission-facts.ts';
import { keepToolFiles } from './tool-files.ts';
import type { TranscriptCache } from './transcript-cache.ts';
import { jsonbOrder } from '../db/jsonb-order.ts';

/**
 * A running tool's timer beat: a cancel whose announcement was lost arrives with the next one. Not faster: every beat is
 * a call the Temporal server persists, and 1,000 tools beating once a second were most of its work
 * (bench/thousand-missions.ts). Far inside the heartbeat timeout (30 s, workflows/activity-options.ts), so a worker
 * starved of CPU for seconds keeps its attempt. A cancel does not wait for it: the API's announcement aborts the call at once.
 */
const TOOL_HEARTBEAT_MS = 2_000;

/**
 * The tool activities. `runTool` runs one tool call (system, HTTP or MCP) with the tool's own retries, stores its output
 * in Postgres and returns only its status; `recordToolEnds` writes the feed rows of calls the workflow ended itself.
 */
export function createToolActivity(deps: ActivityDeps, facts: MissionFactsCache, transcripts: TranscriptCache) {
  const { db, registry, systemTools, embeddings, vectors, env, logger } = deps;
  /** One try of a system tool (built in) or of an app's HTTP or MCP tool. */
  async function execute(
    input: ToolCallInput,
    signal: AbortSignal,
    switches: ReadonlyMap<string, boolean> | undefined,
  ): Promise<ToolReply> {
    // A client tool's result, sent to the API while the workflow waited: stored like any tool's answer.
    if (input.reply) return input.reply;
    if (input.qualifiedName.startsWith(`${SYSTEM_APP_ID}.`)) {
      const mission = await getMission(db, input.missionId);
      return systemTools.run(input.qualifiedName, input.toolUse.input, {
        db,
        mission,
        signal,
        logger,
        toolUseId: input.toolUse.id,
        turn: input.turn,
        attemptScheduledMs: Context.current().info.currentAttemptScheduledTimestampMs,
        embeddings,
        vectors,
        registry,
      });
    }
    const { owner, catalog } = await facts.get(input.missionId);
    const stub = catalog.find((c) => c.qualifiedName === input.qualifiedName)?.stub;
    if (stub) return { ok: true, result: stub.answer };
    const tool = registry.getTool(input.qualifiedName);
    if (!tool) return { ok: false, error: `tool became unavailable: ${input.qualifiedName} is not installed on this worker` };
    const access = await resolveToolAccess(deps, owner, tool, switches);
    if (!access.ok) return { ok: false, error: access.error };
    // The workflow id and tool-use id name the call, so a tool server can drop a retried duplicate.
    const idempotencyKey = `${Context.current().info.workflowExecution?.workflowId ?? input.missionId}/${input.toolUse.id}`;
    if (tool.mcp) return callMcpTool(deps, tool, input, { signal, idempotencyKey });
    if (tool.client) return { ok: false, error: `${input.qualifiedName} is run by the mission's caller, not by Cadenza` };
    return executeHttpTool(tool, input.toolUse.input, { signal, idempotencyKey, env, providerKeys: access.providerKeys });
  }

  /**
   * The tool's tries: a thrown error (network, a system tool's exception) is a failed try, retried here after a
   * pause up to the tool's `retries`, then returned as an error the model sees. The count survives a worker's death
   * in the checkpoint (heartbeat details), so a dead worker costs a Temporal attempt, never one of the tool's tries.
   */
  async function tries(input: ToolCallInput, firstSwitches: ReadonlyMap<string, boolean>): Promise<ToolReply> {
    const ctx = Context.current();
    const call = { missionId: input.missionId, callId: input.toolUse.id };
    return withHeartbeat(TOOL_HEARTBEAT_MS, (timerSignal) =>
      withAnnouncedCancel(
        deps.toolCancels,
        call,
        () => beat(ctx),
        timerSignal,
        async (signal) => {
          for (;;) {
            const failedTries = readCheckpoint(ctx).failedTries ?? 0;
            try {
              // The first try uses the switches read at the start; a later one reads them again.
              return await execute(input, signal, failedTries === 0 ? firstSwitches : undefined);
            } catch (err) {
              if (signal.aborted || err instanceof ApplicationFailure) throw err;
              advanceCheckpoint({ failedTries: failedTries + 1 }, ctx);
              if (failedTries + 1 > input.retries) return { ok: false, error: describe(err) };
              logger.warn('tool try failed; trying again', { tool: input.qualifiedName, tries: failedTries + 1, err: describe(err) });
              await ctx.sleep(toolRetryDelayMs(failedTries + 1));
            }
          }
        },
      ),
    );
  }

  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const ctx = Context.current();
      const started = Date.now();
      const call = { missionId: input.missionId, turn: input.turn, toolUseId: input.toolUse.id, tool: input.qualifiedName };
      const embed = embedCallOf(input);
      const { owner } = await facts.get(input.missionId);
      const fileCall = { missionId: input.missionId, toolUseId: input.toolUse.id, tool: input.qualifiedName };
      // The first attempt of a call that started with the model's reply has its start rows and the switches that
      // statement read: no round trip. Any other first writes its start in one: the feed's start row, the embed as
      // processing, the output an earlier attempt stored (the worker died before reporting: that answer stands, the
      // tool is not called again) and the tenant's app switches.
      const { stored, switches } =
        input.switches && ctx.info.attempt === 1
          ? { stored: undefined, switches: new Map(Object.entries(input.switches)) }
          : await startToolCall(db, owner, call, embed);
      if (stored) {
        const status = stored.status === 'completed' ? 'completed' : 'error';
        const error = status === 'error' ? describe(stored.output) : undefined;
        const summary = await finishEmbed(
          db,
          embed,
          status === 'completed' ? { ok: true, result: stored.output } : { ok: false, error: error! },
          stored.attempt,
        );
        await recordToolFeed(db, call, 'end', { status, durationMs: stored.duration_ms, ...(error ? { error } : {}) });
        return { status, durationMs: stored.duration_ms, ...(error ? { error } : {}), embed: summary };
      }
      let answered: { outcome: ToolReply; durationMs: number; attempt: number; attemptScheduledMs: number };
      try {
        // The answer is kept before its end is written: an end-write that meets a database outage is retried, the
        // tool is not called again.
        answered = await answerOnce(
          async () => ({
            // Files are stored before the answer is kept: the kept answer holds their references, never their bytes.
            outcome: returnsFiles(input.qualifiedName)
              ? await keepToolFiles(db, deps.missionFiles, fileCall, await tries(input, switches))
              : await tries(input, switches),
            durationMs: Date.now() - started,
            attempt: ctx.info.attempt,
            attemptScheduledMs: ctx.info.currentAttemptScheduledTimestampMs,
          }),
          logger,
        );
      } catch (err) {
        // Cancelled by the workflow: this attempt is the last, so it writes the end. Any other throw (a worker
        // shutting down, a non-retryable failure) leaves the end to the next attempt or to the workflow.
        if (ctx.cancellationDetails?.cancelRequested) {
          await endEmbed(db, embed, { status: 'cancelled', attempt: ctx.info.attempt }).catch((e: unknown) =>
            logger.warn('could not record the cancelled embed', { err: String(e) }),
          );
          await recordToolFeed(db, call, 'end', { status: 'cancelled', durationMs: Date.now() - started }).catch((e: unknown) =>
            logger.warn('could not record the tool end in the feed', { err: String(e) }),
          );
        }
        throw err;
      }
      const { outcome, durationMs, attempt, attemptScheduledMs } = answered;
      const error = outcome.ok ? undefined : outcome.error.slice(0, 300);
      const embedEnd = embedEndOf(outcome.ok ? outcome : { ok: false, error: error! }, attempt);
      const result: ToolCallResult = {
        ...(error === undefined ? { status: 'completed', durationMs } : { status: 'error', durationMs, error }),
        embed: embedEnd.summary,
      };
      const output = {
        status: outcome.ok ? ('completed' as const) : ('error' as const),
        // As stored (written once here, in jsonb's key order): the next model call renders the same text whether it reads
        // it back from Postgres or from this worker's memory.
        json: JSON.stringify(jsonbOrder((outcome.ok ? outcome.result : outcome.error) ?? null)),
        durationMs,
        attempt,
        attemptScheduledMs,
      };
      const feed = { status: result.status, durationMs, ...(error ? { error } : {}) };
      if (embedEnd.end.canvases?.length) {
        // Canvases get their ids one by one (endEmbed's transaction); the output and the feed row go beside it.
        await Promise.all([
          endEmbed(db, embed, embedEnd.end),
          putToolCall(db, {
            ...call,
            status: output.status,
            output: outcome.ok ? outcome.result : outcome.error,
            durationMs,
            attempt,
            attemptScheduledMs,
          }),
          recordToolFeed(db, call, 'end', feed),
        ]);
      } else {
        // The output, the embed's end and the feed's end row in one statement; each idempotent on its key.
        await endToolCall(db, owner, call, { output, embed: { call: embed, end: embedEnd.end }, feed });
      }
      // Kept under a stamp the workflow passes to the next model call with this outcome.
      const stamp = transcripts.stamp();
      transcripts.keepOutput(input.missionId, input.turn, { toolUseId: input.toolUse.id, status: output.status, json: output.json }, stamp);
      return { ...result, stamp };
    },

    /** Feed rows (start and end, each once) for calls the workflow ended without their activity's report. */
    async recordToolEnds({ missionId, ends }: { missionId: string; ends: ToolCallEnd[] }): Promise<void> {
      for (const e of ends) {
        const call = { missionId, turn: e.turn, toolUseId: e.toolUseId, tool: e.tool };
        await recordToolFeed(db, call, 'start');
        await recordToolFeed(db, call, 'end', e);
        await endEmbed(db, { id: e.embedId, ...call }, { status: embedStatusOf(e.status), ...(e.error ? { error: e.error } : {}) });
      }
    },
  };
}

// App tools (HTTP, MCP) and scripts return files; the other system tools' results are Cadenza's own, where `files`
// means something else (use_skill's bundle listing).
const returnsFiles = (qualifiedName: string) =>
  !qualifiedName.startsWith(`${SYSTEM_APP_ID}.`) || qualifiedName === `${SYSTEM_APP_ID}.${RUN_SKILL_SCRIPT}`;

// The feed is read by API clients: no network addresses in it.
const describe = (err: unknown) =>
  scrubAddresses(err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err)).slice(0, 300);
