import { Router } from 'express';
import { z } from 'zod';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cancelEvalRun, describeEvalRun, evalRunBenchmark, startEvalRun, type EvalRunRequest } from '../eval-service.ts';
import { routeGroup } from '../openapi/route-doc.ts';
import { validate } from '../validate.ts';
import { evalRunEventSchemas } from '../eval-event-schemas.ts';
import { streamMissionEvents } from '../../events/sse.ts';
import { evalRunStreamId } from '../../events/stream-ids.ts';
import type { EvalRunRow } from '../../db/eval-tables.ts';
import type { EvalSummary } from '../../evals/eval-summary.ts';

const caseId = z.union([z.number().int().nonnegative(), z.string().min(1).max(64)]);
// A version number as Postgres stores it (integer): a larger one would be an error of the database, not a 404.
const versionNumber = z.number().int().min(1).max(2_147_483_647);
const evalRunBody = z
  .object({
    version: versionNumber,
    against: z.union([z.literal('active'), z.literal('none'), versionNumber]).optional(),
    cases: z.array(caseId).min(1).max(100).optional(),
    repeats: z.number().int().min(1).max(10).default(1),
    maxCostUsd: z.number().positive().max(10_000),
  })
  .strict();

const stat = z.looseObject({ mean: z.number(), stddev: z.number(), min: z.number(), max: z.number() });
const side = z.looseObject({ graded: z.number(), passed: z.number(), passRate: z.number(), costUsd: z.number(), durationMs: stat });
const evalRunSchema = z.looseObject({
  id: z.uuid(),
  skillId: z.uuid(),
  skill: z.string(),
  version: z.number().int(),
  baseline: z.looseObject({ kind: z.enum(['none', 'version']) }),
  status: z.enum(['running', 'completed', 'budget_reached', 'cancelled', 'failed']),
  progress: z.looseObject({ total: z.number(), graded: z.number(), running: z.number(), notRun: z.number() }),
  candidate: side,
  baselineFigures: side,
  delta: z.looseObject({ passRate: z.number(), overRepeats: stat }),
  grading: z.looseObject({ costUsd: z.number() }),
  cases: z.array(z.looseObject({ caseId: z.string(), repeat: z.number().int() })),
});
const started = z.looseObject({ evalRunId: z.uuid(), links: z.looseObject({ self: z.string() }) });
const FRESH_MS = 2_000;
const run = { capabilities: ['mission.run' as const, 'skill.read' as const] };
const read = { capabilities: ['skill.read' as const] };

/** The OpenAPI documentation of the routes below: the start under /skills, the reads under /eval-runs. */
export const evalRouteDocs = [
  routeGroup('/api/v1/skills', 'evals', [
    {
      method: 'post',
      path: '/:id/evals',
      summary: "Run a version's eval cases against a baseline (the active version, no skill, or a version), as missions",
      access: run,
      body: evalRunBody,
      responses: { 202: started },
    },
  ]),
  routeGroup('/api/v1/eval-runs', 'evals', [
    {
      method: 'get',
      path: '/:id',
      summary: 'An eval run: progress, pass rates, the delta, and a row per case',
      access: read,
      responses: { 200: evalRunSchema },
    },
    {
      method: 'get',
      path: '/:id/benchmark.json',
      summary: "An eval run in the Agent Skills convention's benchmark.json",
      access: read,
      responses: { 200: z.looseObject({ metadata: z.looseObject({}), runs: z.array(z.looseObject({})), run_summary: z.looseObject({}) }) },
    },
    {
      method: 'get',
      path: '/:id/events',
      summary: "An eval run's progress as Server-Sent Events",
      access: read,
      responses: {
        200: {
          media: 'text/event-stream',
          body: 'sse',
          description:
            "The same stream as a mission's: frames `id: <seq>`, `event: <type>`, `data: <json>`; `Last-Event-ID` (or " +
            '`?lastEventId=`) resumes after that seq; comment lines keep the connection open. Each unit (a case on one ' +
            'side, one repeat) is `unit_started`, `unit_finished` (its mission ended) and `unit_graded`, or `unit_not_run`; ' +
            'then `run_summary` (the figures) and the terminal `run_status`, after which the stream closes.',
          events: evalRunEventSchemas,
          live: {},
        },
      },
    },
    {
      method: 'post',
      path: '/:id/cancel',
      summary: 'Cancel an eval run and its missions',
      access: run,
      responses: { 202: z.looseObject({ id: z.uuid() }) },
    },
  ]),
];

/** Skill evals: start a run of a version's cases, read its figures and benchmark.json, cancel it. Each route authenticates. */
export function evalsRouter(deps: ApiDeps): Router {
  const router = Router();
  const auth = authenticate(deps.db);

  router.post(
    '/skills/:id/evals',
    auth,
    requireCapability('mission.run'),
    requireCapability('skill.read'),
    validate('body', evalRunBody),
    async (req, res) => {
      const { evalRunId } = await startEvalRun(deps, principal(res), String(req.params.id), res.locals.body as EvalRunRequest);
      res.status(202).json({ evalRunId, status: 'running', links: { self: `/api/v1/eval-runs/${evalRunId}` } });
    },
  );

  router.get('/eval-runs/:id', auth, requireCapability('skill.read'), async (req, res) => {
    const { run, summary } = await describeEvalRun(deps, principal(res), String(req.params.id));
    res.json(view(run, summary));
  });

  router.get('/eval-runs/:id/benchmark.json', auth, requireCapability('skill.read'), async (req, res) => {
    res.json(await evalRunBenchmark(deps, principal(res), String(req.params.id)));
  });

  router.get('/eval-runs/:id/events', auth, requireCapability('skill.read'), async (req, res) => {
    const { run } = await describeEvalRun(deps, principal(res), String(req.params.id));
    // Started moments ago: its first events are yet to be logged, and their wake-up brings them.
    const fresh = run.status === 'running' && Date.now() - new Date(run.created_at).getTime() < FRESH_MS;
    streamMissionEvents(req, res, deps.relay, { id: evalRunStreamId(run.id), fresh }, deps.sseKeepAliveMs);
    deps.metrics.sseOpened();
    res.on('close', () => deps.metrics.sseClosed());
  });

  router.post('/eval-runs/:id/cancel', auth, requireCapability('mission.run'), async (req, res) => {
    await cancelEvalRun(deps, principal(res), String(req.params.id));
    res.status(202).json({ id: String(req.params.id), status: 'cancelling' });
  });
  return router;
}

function view(run: EvalRunRow, summary: EvalSummary) {
  const mission = (id: string | null) => (id ? `/api/v1/missions/${id}` : null);
  return {
    id: run.id,
    skillId: run.skill_id,
    skill: run.skill_name,
    version: run.version,
    baseline: run.baseline,
    repeats: run.repeats,
    maxCostUsd: run.max_cost_usd,
    status: run.status,
    createdAt: run.created_at,
    finishedAt: run.finished_at,
    progress: summary.progress,
    candidate: summary.candidate,
    baselineFigures: summary.baseline,
    delta: summary.delta,
    grading: summary.grading,
    cases: summary.cases.map((c) => ({
      ...c,
      candidate: { ...c.candidate, mission: mission(c.candidate.missionId) },
      baseline: { ...c.baseline, mission: mission(c.baseline.missionId) },
    })),
    links: { self: `/api/v1/eval-runs/${run.id}`, benchmark: `/api/v1/eval-runs/${run.id}/benchmark.json` },
  };
}
