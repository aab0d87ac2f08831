import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { ConflictError } from '../contracts/errors.ts';
import { findOwnedMission, listOwnedMissions } from '../db/missions.ts';
import type { MissionRow } from '../db/schema.ts';
import { cancelMission } from '../missions/cancel-mission.ts';
import type { Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { callResult, followMission } from './mcp-tools.ts';

/** How often a client is told to poll `tasks/get` (the SDK's client waits this long between polls). */
const POLL_MS = 1_000;
const TASKS_PAGE = 50;
/** How long `tasks/cancel` waits for the mission to close before answering with the task as it is. */
const CANCEL_WAIT_MS = 15_000;

/** The capability a session announces: tool calls may be tasks, which it lists and cancels. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** A mission as an MCP task: the task id is the mission id, its status the mission's; missions are kept, so no ttl. */
export function taskOf(row: MissionRow): Task {
  const status =
    row.status === 'completed' ? 'completed' : row.status === 'failed' ? 'failed' : row.status === 'cancelled' ? 'cancelled' : 'working';
  return {
    taskId: row.id,
    status,
    // What "working" hides: queued, starting, running, paused or idle, as the REST API says it.
    ...(status === 'working' ? { statusMessage: `mission ${row.status}` } : {}),
    ttl: null,
    createdAt: new Date(row.created_at).toISOString(),
    lastUpdatedAt: new Date(row.finished_at ?? row.updated_at).toISOString(),
    pollInterval: POLL_MS,
  };
}

type Caller = (auth: AuthInfo | undefined, capability: string) => Principal;

/**
 * The protocol's task utility on a session's server, with missions as the tasks and no task store: `tasks/get` and
 * `tasks/list` read the caller's missions (any API process answers, and tasks survive restarts), `tasks/result`
 * waits for the mission's end through the relay and answers the `tools/call` result, `tasks/cancel` cancels the
 * mission as `POST /missions/:id/cancel` does. Someone else's mission is as unknown as one that never was.
 */
export function serveMissionTasks(server: Server, deps: ApiDeps, caller: Caller): void {
  const owned = async (owner: Principal, taskId: string) => {
    const row = await findOwnedMission(deps.db, owner, taskId);
    if (!row) throw new McpError(ErrorCode.InvalidParams, `task not found: ${taskId}`);
    return row;
  };

  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) =>
    taskOf(await owned(caller(extra.authInfo, 'mission.read'), request.params.taskId)),
  );

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const owner = caller(extra.authInfo, 'mission.read');
    const row = await owned(owner, request.params.taskId);
    // Waiting here is the protocol's: the result comes when the task is terminal. Dropping the wait cancels nothing.
    const ended = taskOf(row).status === 'working' ? await followMission(deps, owner, row) : row;
    const result = await callResult(deps, ended);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId: row.id } } };
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request, extra) => {
    const owner = caller(extra.authInfo, 'mission.read');
    const afterId = request.params?.cursor;
    const rows = await listOwnedMissions(deps.db, owner, { limit: TASKS_PAGE + 1, ...(afterId ? { afterId } : {}) });
    const page = rows.slice(0, TASKS_PAGE);
    return { tasks: page.map(taskOf), ...(rows.length > TASKS_PAGE ? { nextCursor: page.at(-1)!.id } : {}) };
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) => {
    const owner = caller(extra.authInfo, 'mission.run');
    const row = await owned(owner, request.params.taskId);
    if (taskOf(row).status !== 'working') throw new McpError(ErrorCode.InvalidParams, `task ${row.id} is already ${row.status}`);
    const outcome = await cancelMission(deps, row).catch((err: unknown) => {
      throw err instanceof ConflictError ? new McpError(ErrorCode.InvalidParams, `task ${row.id}: ${err.message}`) : err;
    });
    // The answer is the task once cancelled (as A2A's CancelTask waits), or as it is if that takes longer.
    if (outcome === 'cancelling') await endOf(deps, row.id, CANCEL_WAIT_MS);
    return taskOf(await owned(owner, row.id));
  });
}

/** Resolves when the mission's event stream ends, or after `ms`. */
function endOf(deps: ApiDeps, missionId: string, ms: number): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    const unsubscribe = deps.relay.subscribe(missionId, { afterSeq: 0, onEvent: () => {}, onEnd: () => finish() });
    function finish() {
      clearTimeout(timer);
      queueMicrotask(() => unsubscribe());
      done();
    }
  });
}
