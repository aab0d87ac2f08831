import { Router } from 'express';
import { z } from 'zod';
import { getCanvas, getEmbed, listMissionEmbeds } from '../../db/embeds.ts';
import { findOwnedMission } from '../../db/missions.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { canvasView, embedView } from '../embed-view.ts';
import { validate } from '../validate.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';

const listQuery = z.object({ missionId: z.string().trim().min(1).max(64) }).strict();

const embedSchema = z.looseObject({
  id: z.string(),
  missionId: z.string(),
  turn: z.number().int(),
  toolUseId: z.string(),
  tool: z.string(),
  status: z.enum(['processing', 'finished', 'error', 'cancelled']),
  result: z.unknown().optional(),
  error: z.string().optional(),
  previews: z.array(z.looseObject({ hash: z.string() })),
  followUps: z.array(z.string()),
  addedInstructions: z.string().optional(),
  canvasSpecIds: z.array(z.string()),
  warnings: z.array(z.string()),
  createdAt: timestamp,
  updatedAt: timestamp,
  finishedAt: timestamp.nullable(),
  links: z.looseObject({ self: z.string(), mission: z.string() }),
});
const canvasSchema = z.looseObject({
  id: z.string(),
  type: z.enum(['vega-lite', 'table', 'markdown']),
  title: z.string(),
  spec: z.unknown(),
  embedId: z.string(),
  missionId: z.string(),
  createdAt: timestamp,
});
const read = { capabilities: ['mission.read' as const] };

/** The OpenAPI documentation of the routes below. */
export const embedRouteDocs = routeGroup('/api/v1/embeds', 'embeds', [
  {
    method: 'get',
    path: '/',
    summary: "A mission's embeds, in call order (404 for a mission that is not the caller's)",
    access: read,
    query: listQuery,
    responses: { 200: z.looseObject({ items: z.array(embedSchema) }) },
  },
  {
    method: 'get',
    path: '/:id',
    summary: "One embed: a tool invocation's stored result and status",
    access: read,
    responses: { 200: embedSchema },
  },
]);
export const canvasRouteDocs = routeGroup('/api/v1/canvases', 'embeds', [
  {
    method: 'get',
    path: '/:id',
    summary: 'A canvas spec a tool result carried (Vega-Lite, table, markdown)',
    access: read,
    responses: { 200: canvasSchema },
  },
]);

/** Tool results as embeds: one by id, or a mission's in call order; owner-private (someone else's is a 404). */
export function embedsRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(db));
  router.get('/', requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const { missionId } = res.locals.query as z.infer<typeof listQuery>;
    const mission = await findOwnedMission(db, principal(res), missionId);
    if (!mission) throw notFound('mission');
    res.json({ items: (await listMissionEmbeds(db, mission.id)).map(embedView) });
  });
  router.get('/:id', requireCapability('mission.read'), async (req, res) => {
    const embed = await getEmbed(db, principal(res), String(req.params.id));
    if (!embed) throw notFound('embed');
    res.json(embedView(embed));
  });
  return router;
}

/** Canvas specs (vega-lite, table, markdown) the tool results carried; owner-private. */
export function canvasesRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(db));
  router.get('/:id', requireCapability('mission.read'), async (req, res) => {
    const canvas = await getCanvas(db, principal(res), String(req.params.id));
    if (!canvas) throw notFound('canvas');
    res.json(canvasView(canvas));
  });
  return router;
}
