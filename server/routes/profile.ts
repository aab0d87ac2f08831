import { Router } from 'express';
import { z } from 'zod';
import { getProfile, putProfile } from '../../db/profiles.ts';
import type { ProfileRow } from '../../db/schema.ts';
import type { ApiDeps } from '../deps.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { validate } from '../validate.ts';

const text = (max: number) => z.string().trim().min(1).max(max).nullable().optional();
const profileBody = z
  .object({
    company: text(200),
    role: text(200),
    brandVoice: text(2_000),
    preferences: z
      .record(z.string().trim().min(1).max(100), z.union([z.string().max(2_000), z.number(), z.boolean()]))
      .refine((p) => Object.keys(p).length <= 50, 'at most 50 preferences')
      .optional(),
  })
  .strict();

const profileSchema = z.looseObject({
  company: z.string().nullable(),
  role: z.string().nullable(),
  brandVoice: z.string().nullable(),
  preferences: z.record(z.string(), z.unknown()),
  updatedAt: timestamp.nullable(),
});
/** The OpenAPI documentation of the routes below. */
export const profileRouteDocs = routeGroup('/api/v1/profile', 'profile', [
  {
    method: 'get',
    path: '/',
    summary: "The caller's profile",
    access: { capabilities: ['mission.read'] },
    responses: { 200: profileSchema },
  },
  {
    method: 'put',
    path: '/',
    summary: 'Replace the profile',
    access: { capabilities: ['mission.run'] },
    body: profileBody,
    responses: { 200: profileSchema },
  },
]);

/** The caller's profile: who missions work for. PUT replaces it whole. */
export function profileRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(db));
  router.get('/', requireCapability('mission.read'), async (_req, res) => {
    res.json(view(await getProfile(db, principal(res))));
  });
  router.put('/', requireCapability('mission.run'), validate('body', profileBody), async (_req, res) => {
    res.json(view(await putProfile(db, principal(res), res.locals.body as z.infer<typeof profileBody>)));
  });
  return router;
}

const view = (p: ProfileRow | undefined) => ({
  company: p?.company ?? null,
  role: p?.role ?? null,
  brandVoice: p?.brand_voice ?? null,
  preferences: p?.preferences ?? {},
  updatedAt: p?.updated_at ?? null,
});
