import { z } from 'zod';
import { Router } from 'express';
import { activateDraftVersion, changeSkillStatus, findOwnedSkill } from '../../db/skills.ts';
import { evalGateRefusal } from '../../evals/eval-gate.ts';
import { ConflictError } from '../../contracts/errors.ts';
import type { ApiDeps } from '../deps.ts';
import { principal, requireCapability } from '../auth.ts';
import { HttpError, notFound } from '../errors.ts';
import { routeGroup } from '../openapi/route-doc.ts';

const reviewed = z.looseObject({
  id: z.uuid(),
  name: z.string(),
  version: z.number().int(),
  status: z.enum(['draft', 'active', 'quarantined']),
});
const review = { capabilities: ['skill.review' as const] };
/** The OpenAPI documentation of the routes below. */
export const skillReviewRouteDocs = routeGroup('/api/v1/skills', 'skills', [
  { method: 'post', path: '/:id/activate', summary: 'Activate a draft or quarantined skill', access: review, responses: { 200: reviewed } },
  {
    method: 'post',
    path: '/:id/deactivate',
    summary: 'Take an active skill out of use (it becomes a draft)',
    access: review,
    responses: { 200: reviewed },
  },
]);

/**
 * The review gate: a key with skill.review activates a skill (imports start quarantined), or its draft version (a
 * script factory's, written while the skill was active), or takes it out of use. Under SKILL_ACTIVATION_REQUIRES_EVAL
 * a version activates only on a finished eval run no worse than its baseline by more than EVAL_MAX_REGRESSION.
 */
export function skillReviewRouter({ db, config }: ApiDeps): Router {
  const router = Router();

  router.post('/:id/activate', requireCapability('skill.review'), async (req, res) => {
    if (config.evals.requireForActivation) {
      const found = await findOwnedSkill(db, principal(res), String(req.params.id));
      if (!found) throw notFound('skill');
      const refusal = await evalGateRefusal(db, found.skill, config.evals.maxRegression);
      if (refusal) throw new ConflictError(refusal.message, { evalRunId: refusal.evalRunId ?? null, delta: refusal.delta ?? null });
    }
    const promoted = await activateDraftVersion(db, principal(res), String(req.params.id));
    if (promoted) {
      res.json({ id: promoted.id, name: promoted.name, version: promoted.active_version, status: promoted.status });
      return;
    }
    const changed = await changeSkillStatus(db, principal(res), String(req.params.id), ['quarantined', 'draft'], 'active');
    if (!changed) throw notFound('skill');
    const { skill } = changed;
    res.json({ id: skill.id, name: skill.name, version: skill.active_version, status: skill.status });
  });

  // Deactivating deletes nothing: the skill and all its versions stay, as a draft that may be activated again.
  router.post('/:id/deactivate', requireCapability('skill.review'), async (req, res) => {
    const changed = await changeSkillStatus(db, principal(res), String(req.params.id), ['active'], 'draft');
    if (!changed) throw notFound('skill');
    const { skill } = changed;
    if (skill.status === 'quarantined')
      throw new HttpError('conflict', `skill ${skill.name} is quarantined, not active: there is nothing to deactivate`);
    res.json({ id: skill.id, name: skill.name, version: skill.active_version, status: skill.status });
  });
  return router;
}
