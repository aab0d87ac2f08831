import type { MissionEvent } from '../contracts/events.ts';
import type { Principal } from '../server/auth.ts';
import { findOwnedMission } from '../db/missions.ts';
import { listOwnedSkills } from '../db/skills.ts';
import { cancelMission } from '../missions/cancel-mission.ts';
import { startMission } from '../missions/start-mission.ts';
import type { MissionRow } from '../db/schema.ts';
import type { ApiDeps } from '../server/deps.ts';
import { missionDetail } from '../server/mission-view.ts';

/** Tools listed per page of `tools/list`. */
export const TOOLS_PAGE = 100;

/** What every skill tool takes: the objective, and the mission options a caller may set. */
export const SKILL_TOOL_INPUT = {
  type: 'object',
  properties: {
    objective: { type: 'string', minLength: 1, maxLength: 20_000, description: 'What the mission should achieve.' },
    workspaceCode: { type: 'string', minLength: 1, maxLength: 128, description: 'The workspace the mission runs in (default "mcp").' },
    maxTurns: { type: 'integer', minimum: 1, maximum: 50, description: 'A lower turn limit than the skill’s.' },
  },
  required: ['objective'],
  additionalProperties: false,
} as const;

/** The caller's active skills as tools, a page at a time by name (the cursor is the last name sent). */
export async function skillTools(deps: Pick<ApiDeps, 'db'>, owner: Principal, cursor: string | undefined) {
  const skills = (await listOwnedSkills(deps.db, owner, 'active')).filter((s) => cursor === undefined || s.name > cursor);
  const page = skills.slice(0, TOOLS_PAGE);
  return {
    tools: page.map((s) => ({
      name: s.name,
      title: s.name,
      description: s.description,
      inputSchema: SKILL_TOOL_INPUT,
      // A call may be a task (the protocol's long-running call, polled by id) or answer when the mission ends.
      execution: { taskSupport: 'optional' as const },
    })),
    ...(skills.length > TOOLS_PAGE ? { nextCursor: page.at(-1)!.name } : {}),
  };
}

export type CallArgs = { objective: string; workspaceCode?: string; maxTurns?: number };

/** A tool call's mission: started as `POST /missions` starts one, its workspace `mcp` unless the caller names one. */
export async function startSkillMission(deps: ApiDeps, owner: Principal, skill: string, args: CallArgs): Promise<MissionRow> {
  const { row } = await startMission(deps, owner, {
    skill,
    objective: args.objective,
    workspaceCode: args.workspaceCode ?? 'mcp',
    ...(args.maxTurns !== undefined ? { maxTurns: args.maxTurns } : {}),
  });
  return row;
}

/**
 * Follows a mission to its end through the relay, reporting each turn and tool call as progress; an abort (the
 * client's `notifications/cancelled`) cancels the mission. A dropped connection without a cancel leaves the mission
 * running: it outlives its caller. Answers the mission's row as it ended.
 */
export async function followMission(
  deps: ApiDeps,
  owner: Principal,
  row: MissionRow,
  o: { signal?: AbortSignal; progress?: (n: number, message: string) => Promise<void> } = {},
): Promise<MissionRow> {
  let steps = 0;
  const onAbort = () => void cancelMission(deps, row).catch(() => {});
  await new Promise<void>((done) => {
    const unsubscribe = deps.relay.subscribe(row.id, {
      afterSeq: 0,
      fresh: true,
      onEvent: (e) => {
        const said = progressOf(e);
        if (said && o.progress) void o.progress(++steps, said).catch(() => {});
      },
      onEnd: () => {
        unsubscribe();
        o.signal?.removeEventListener('abort', onAbort);
        done();
      },
    });
    o.signal?.addEventListener('abort', onAbort, { once: true });
  });
  // The caller's own mission: it is there.
  return (await findOwnedMission(deps.db, owner, row.id))!;
}

/** A mission as a `tools/call` result: its answer (or error) as text, a link to it, its id, status and metrics. */
export async function callResult(deps: ApiDeps, row: MissionRow) {
  const detail = await missionDetail(deps, row);
  const text = detail.result?.text ?? detail.error?.message ?? `mission ${detail.status}`;
  return {
    isError: detail.status !== 'completed',
    content: [
      { type: 'text' as const, text },
      { type: 'resource_link' as const, uri: `cadenza://missions/${row.id}`, name: `mission ${row.id}`, mimeType: 'application/json' },
    ],
    structuredContent: {
      missionId: row.id,
      status: detail.status,
      ...(detail.result ? { metrics: detail.result.metrics, canvasSpecIds: detail.result.canvasSpecIds } : {}),
    },
  };
}

/** A mission event as a progress message, for the events a person follows (MCP progress, A2A working status). */
export function progressOf(e: MissionEvent): string | undefined {
  switch (e.type) {
    case 'turn':
      return `turn ${e.turn}`;
    case 'tool_start':
      return `${e.tool} started`;
    case 'tool_end':
      return `${e.tool} ${e.status}`;
    case 'approval_requested':
      return `${e.tool} waits for approval`;
    case 'status':
      return `mission ${e.status}`;
    default:
      return undefined;
  }
}
