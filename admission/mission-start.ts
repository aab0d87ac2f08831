import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { getMission, updateMissionIfStatus } from '../db/missions.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import {
  MISSION_WORKFLOW,
  RetryOfSearchAttribute,
  SkillSearchAttribute,
  SkillVersionSearchAttribute,
  StatusSearchAttribute,
  UserSearchAttribute,
  missionWorkflowId,
  type MissionInput,
} from '../contracts/mission.ts';
import { ScheduleSearchAttribute } from '../contracts/schedules.ts';

/**
 * Starts a mission's workflow, or finds it: the workflow id `mission-<id>` is the business id, so a second start of
 * the same mission (a repeated request, the start settler) gets the running workflow (`USE_EXISTING`) and never a
 * second run of a closed one (`REJECT_DUPLICATE`, whose refusal means the workflow existed).
 */
export async function startMissionWorkflow(
  deps: { temporal: Client; config: Pick<Config, 'temporal' | 'sessions'> },
  row: MissionRow,
): Promise<void> {
  const queued = row.status === 'queued';
  const input: MissionInput = {
    missionId: row.id,
    ...(queued ? { queued } : {}),
    modelTaskQueue: deps.config.temporal.modelTaskQueue,
    toolTaskQueue: deps.config.temporal.toolTaskQueue,
    ...(row.resume ? { resume: row.resume } : {}),
    maxQueuedMessages: deps.config.sessions.maxQueuedMessages,
    sessionHistoryEvents: deps.config.sessions.historyEvents,
  };
  try {
    await deps.temporal.workflow.start(MISSION_WORKFLOW, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: missionWorkflowId(row.id),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: SkillSearchAttribute, value: row.skill_name },
        { key: UserSearchAttribute, value: `${row.tenant_id}/${row.user_id}` },
        { key: StatusSearchAttribute, value: queued ? 'queued' : 'running' },
        { key: SkillVersionSearchAttribute, value: String(row.skill_version) },
        ...(row.retry_of ? [{ key: RetryOfSearchAttribute, value: row.retry_of }] : []),
        ...(row.schedule_id ? [{ key: ScheduleSearchAttribute, value: row.schedule_id }] : []),
      ],
      staticSummary: `${row.skill_name} v${row.skill_version}${row.resume ? ` · retry from turn ${row.resume.turn}` : ''} · ${truncate(row.objective, 120)}`,
      staticDetails: `**Skill:** ${row.skill_name} v${row.skill_version}\n\n**Objective:** ${truncate(row.objective, 1000)}`,
      memo: {
        tenantId: row.tenant_id,
        userId: row.user_id,
        skill: row.skill_name,
        skillVersion: row.skill_version,
        ...(row.resume ? { retryOf: row.resume.retryOf, resumedAtTurn: row.resume.turn } : {}),
      },
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * `starting` → `running` once the mission's workflow exists; the row as it now is. A row that ended meanwhile keeps its
 * status (a quick mission), and one cancelled or settled as failed while its start was in flight (the workflow arrived
 * after the row gave up on it) gets that workflow cancelled: a workflow never runs for a mission that says it does not.
 */
export async function markRunning(deps: { db: Kysely<Database>; temporal: Client }, id: string): Promise<MissionRow> {
  const running = await updateMissionIfStatus(deps.db, id, 'starting', { status: 'running' });
  if (running) return running;
  const row = await getMission(deps.db, id);
  if (row.status === 'cancelled' || (row.status === 'failed' && row.error?.phase === 'start')) {
    await deps.temporal.workflow
      .getHandle(missionWorkflowId(id))
      .cancel()
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
  }
  return row;
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
