import { Router } from 'express';
import { z } from 'zod';
import { getCanvas, getEmbed, listMissionEmbeds } from '../../db/embeds.ts';
import { findOwnedMission } from '../../db/missions.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { canvasView, embedView } from '../embed-view.ts';
import { validate } from '../validate.ts';

const listQuery = z.object({ missionId: z.string().trim().min(1).max(64) }).strict();

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
