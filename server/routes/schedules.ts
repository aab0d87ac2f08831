import { Router } from 'express';
import { z } from 'zod';
import type { ScheduleRow, ScheduleRunRow } from '../../db/schema.ts';
import { listOwnedSchedules } from '../../db/schedules.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cursorKey, cursorParam, nextCursor, UUID_KEY } from '../cursor.ts';
import { page, routeGroup } from '../openapi/route-doc.ts';
import { actOnSchedule, changeSchedule, createSchedule, describeSchedule, removeSchedule } from '../schedule-service.ts';
import {
  createScheduleBody,
  scheduleDetailSchema,
  scheduleSchema,
  updateScheduleBody,
  type CreateScheduleBody,
  type UpdateScheduleBody,
} from '../schedule-schemas.ts';
import { queryInt, validate } from '../validate.ts';

const listQuery = z.object({ limit: queryInt(1, 100).default(20), cursor: cursorParam('sc', UUID_KEY).optional() }).strict();
const ACTS = ['pause', 'unpause', 'trigger'] as const;

const read = { capabilities: ['mission.read' as const] };
const run = { capabilities: ['mission.run' as const] };
/** The OpenAPI documentation of the routes below. */
export const scheduleRouteDocs = routeGroup('/api/v1/schedules', 'schedules', [
  {
    method: 'post',
    path: '/',
    summary: 'Create a schedule: a Temporal Schedule that starts a mission on a cron or an interval',
    access: run,
    body: createScheduleBody,
    responses: { 201: scheduleSchema },
  },
  {
    method: 'get',
    path: '/',
    summary: "The caller's schedules, newest first",
    access: read,
    query: listQuery,
    responses: { 200: page(scheduleSchema) },
  },
  {
    method: 'get',
    path: '/:id',
    summary: 'A schedule: its spec, whether paused, next run times, and its latest runs with their missions',
    access: read,
    responses: { 200: scheduleDetailSchema },
  },
  {
    method: 'patch',
    path: '/:id',
    summary: "Change a schedule's timing, objective, limits or overlap policy",
    access: run,
    body: updateScheduleBody,
    responses: { 200: scheduleSchema },
  },
  ...ACTS.map((act) => ({
    method: 'post' as const,
    path: `/:id/${act}`,
    summary: { pause: 'Pause a schedule', unpause: 'Resume a paused schedule', trigger: 'Run a schedule now' }[act],
    access: run,
    responses: { 202: z.looseObject({ id: z.uuid(), status: z.literal(act === 'trigger' ? 'triggered' : `${act}d`) }) },
  })),
  { method: 'delete', path: '/:id', summary: 'Delete a schedule (its missions stay)', access: run, responses: { 204: { media: 'none' } } },
]);

/** Schedules: recurring missions on Temporal Schedules, started as their owner through the missions' own start path. */
export function schedulesRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(deps.db));

  router.post('/', requireCapability('mission.run'), validate('body', createScheduleBody), async (_req, res) => {
    res.status(201).json(view(await createSchedule(deps, principal(res), res.locals.body as CreateScheduleBody)));
  });

  router.get('/', requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const { limit, cursor } = res.locals.query as z.infer<typeof listQuery>;
    const rows = await listOwnedSchedules(deps.db, principal(res), { limit, afterId: cursor ? cursorKey(cursor) : undefined });
    res.json({ items: rows.map(view), nextCursor: nextCursor(rows, limit, 'sc', (r) => r.id) });
  });

  router.get('/:id', requireCapability('mission.read'), async (req, res) => {
    const { row, runs, ...live } = await describeSchedule(deps, principal(res), String(req.params.id));
    res.json({ ...view(row), ...live, runs: runs.map(runView) });
  });

  router.patch('/:id', requireCapability('mission.run'), validate('body', updateScheduleBody), async (req, res) => {
    res.json(view(await changeSchedule(deps, principal(res), String(req.params.id), res.locals.body as UpdateScheduleBody)));
  });

  for (const act of ACTS) {
    router.post(`/:id/${act}`, requireCapability('mission.run'), async (req, res) => {
      await actOnSchedule(deps, principal(res), String(req.params.id), act);
      res.status(202).json({ id: String(req.params.id), status: act === 'trigger' ? 'triggered' : `${act}d` });
    });
  }

  router.delete('/:id', requireCapability('mission.run'), async (req, res) => {
    await removeSchedule(deps, principal(res), String(req.params.id));
    res.status(204).end();
  });
  return router;
}

const view = (s: ScheduleRow) => ({
  id: s.id,
  skill: s.skill,
  objective: s.objective,
  workspaceCode: s.workspace_code,
  spec: { timezone: 'UTC', ...s.spec },
  overlap: s.overlap,
  catchupWindow: s.catchup_window,
  limits: s.limits,
  paused: s.paused,
  createdAt: s.created_at,
  updatedAt: s.updated_at,
  links: { self: `/api/v1/schedules/${s.id}`, missions: `/api/v1/missions?scheduleId=${s.id}` },
});

const runView = (r: ScheduleRunRow) => ({
  runKey: r.run_key,
  scheduledAt: r.scheduled_at,
  outcome: r.outcome,
  missionId: r.mission_id,
  reason: r.reason,
  at: r.at,
});
