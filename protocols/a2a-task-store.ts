import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type ListTasksRequest, type ListTasksResponse, type Message, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { MissionResult } from '../contracts/mission.ts';
import { findMissionByIdempotencyKey, findOwnedMission, listOwnedMissions } from '../db/missions.ts';
import type { MissionRow } from '../db/schema.ts';
import type { ApiDeps } from '../server/deps.ts';
import { missionDetail } from '../server/mission-view.ts';
import type { Principal } from '../server/auth.ts';
import { callerOf } from './a2a-caller.ts';

/**
 * A mission started for an A2A context carries the context in its idempotency key: the same context is the same
 * mission (a session), found again by the key in any API process.
 */
const CONTEXT_KEY = 'a2a-context:';
export const contextKey = (contextId: string): string => `${CONTEXT_KEY}${contextId}`;
/** The A2A context of a mission: the one it was started for, else its own id. */
export const contextOf = (row: MissionRow): string =>
  row.idempotency_key?.startsWith(CONTEXT_KEY) ? row.idempotency_key.slice(CONTEXT_KEY.length) : row.id;

/** The caller's mission an A2A context names: the one started for it, or a mission whose context is its own id. */
export async function findContext(deps: Pick<ApiDeps, 'db'>, who: Principal, contextId: string): Promise<MissionRow | undefined> {
  const started = await findMissionByIdempotencyKey(deps.db, who, contextKey(contextId));
  if (started) return started;
  const own = await findOwnedMission(deps.db, who, contextId);
  return own && contextOf(own) === own.id ? own : undefined;
}

type Detail = Awaited<ReturnType<typeof missionDetail>>;

const STATES: Record<string, TaskState> = {
  starting: TaskState.TASK_STATE_SUBMITTED,
  queued: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  // A session that answered waits for the next message: the A2A interrupted state a client continues with a message.
  idle: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};
export const stateOf = (status: string): TaskState => STATES[status] ?? TaskState.TASK_STATE_WORKING;

export function textPart(text: string) {
  return { content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

export function agentMessage(task: { id: string; contextId: string }, text: string, role = Role.ROLE_AGENT): Message {
  return {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** One exchange's answer as an artifact (`result-<n>`, n from 1): the text, with its canvases and metrics beside it. */
export function resultArtifact(result: MissionResult, n: number): Artifact {
  return {
    artifactId: `result-${n}`,
    name: 'result',
    description: n === 1 ? 'The mission’s answer' : `The answer of exchange ${n}`,
    parts: [textPart(result.text)],
    metadata: { canvasSpecIds: result.canvasSpecIds, stoppedBy: result.stoppedBy, metrics: result.metrics },
    extensions: [],
  };
}

/** A mission as an A2A task: its status, an artifact per answered exchange, the objective as the first message. */
export function taskOf(row: MissionRow, detail: Detail): Task {
  const ids = { id: row.id, contextId: contextOf(row) };
  const results = detail.exchanges ?? (detail.result ? [detail.result] : []);
  const last = results.at(-1);
  const said = detail.error?.message ?? (detail.status === 'idle' ? last?.text : undefined);
  return {
    ...ids,
    status: {
      state: stateOf(detail.status),
      message: said === undefined ? undefined : agentMessage(ids, said),
      timestamp: (row.finished_at ?? new Date()).toISOString(),
    },
    artifacts: results.map(resultArtifact),
    history: [agentMessage(ids, row.objective, Role.ROLE_USER), ...results.map((r) => agentMessage(ids, r.text))],
    metadata: { skill: detail.skill, mission: detail.links.self, events: detail.links.events },
  };
}

/** The caller's mission as a task, or undefined (someone else's mission is as missing as one that never was). */
export async function loadTask(deps: Pick<ApiDeps, 'db' | 'temporal'>, who: Principal, id: string): Promise<Task | undefined> {
  const row = await findOwnedMission(deps.db, who, id);
  return row ? taskOf(row, await missionDetail(deps, row)) : undefined;
}

/**
 * The SDK's task store over Cadenza's missions: a task is read from the mission (Postgres, and the workflow's state
 * while it runs), so `GetTask` answers from any API process and after a restart. `save` keeps nothing: the mission is
 * the record, and what the SDK would store is derived from it.
 */
export class MissionTaskStore implements TaskStore {
  private readonly deps: Pick<ApiDeps, 'db' | 'temporal'>;
  constructor(deps: Pick<ApiDeps, 'db' | 'temporal'>) {
    this.deps = deps;
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return loadTask(this.deps, callerOf(context).principal, taskId);
  }

  async save(): Promise<void> {}

  /** Newest first, a page at a time (`pageToken`: the last id sent); `contextId` names one mission, `status` filters the page. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const who = callerOf(context).principal;
    const pageSize = params.pageSize ?? 50;
    const rows = params.contextId
      ? [await findContext(this.deps, who, params.contextId)].filter((r) => r !== undefined)
      : await listOwnedMissions(this.deps.db, who, { limit: pageSize, ...(params.pageToken ? { afterId: params.pageToken } : {}) });
    const tasks = (await Promise.all(rows.map(async (r) => taskOf(r, await missionDetail(this.deps, r))))).filter(
      (t) => !params.status || t.status?.state === params.status,
    );
    const more = !params.contextId && rows.length === pageSize;
    return { tasks, nextPageToken: more ? rows.at(-1)!.id : '', pageSize, totalSize: tasks.length };
  }
}
