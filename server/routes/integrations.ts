import { Router } from 'express';
import { z } from 'zod';
import { deleteIntegration, INTEGRATION_STATUSES, listIntegrations, putIntegration } from '../../db/integrations.ts';
import type { IntegrationRow } from '../../db/schema.ts';
import type { ApiDeps } from '../deps.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { validate } from '../validate.ts';

// The same shape as `requires_account` in app.yml, so a provider here can match one there.
const provider = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+([-_][a-z0-9]+)*$/, 'lowercase letters and digits, joined by single - or _');
const body = z.object({ provider, status: z.enum(INTEGRATION_STATUSES).default('active') }).strict();

const integrationSchema = z.looseObject({
  provider: z.string(),
  status: z.enum(INTEGRATION_STATUSES),
  createdAt: timestamp,
  updatedAt: timestamp,
});
/** The OpenAPI documentation of the routes below. */
export const integrationRouteDocs = routeGroup('/api/v1/integrations', 'integrations', [
  {
    method: 'get',
    path: '/',
    summary: "The caller's connected accounts",
    access: { capabilities: ['mission.read'] },
    responses: { 200: z.looseObject({ items: z.array(integrationSchema) }) },
  },
  {
    method: 'post',
    path: '/',
    summary: 'Connect (or update) an account',
    access: { capabilities: ['mission.run'] },
    body,
    responses: { 200: integrationSchema, 201: integrationSchema },
  },
  {
    method: 'delete',
    path: '/:provider',
    summary: 'Disconnect an account',
    access: { capabilities: ['mission.run'] },
    responses: { 204: { media: 'none' } },
  },
]);

/** The caller's integrations: which providers' accounts are connected (only active ones open gated tools). */
export function integrationsRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(db));
  router.get('/', requireCapability('mission.read'), async (_req, res) => {
    res.json({ items: (await listIntegrations(db, principal(res))).map(view) });
  });
  router.post('/', requireCapability('mission.run'), validate('body', body), async (_req, res) => {
    const b = res.locals.body as z.infer<typeof body>;
    const { row, created } = await putIntegration(db, principal(res), b.provider, b.status);
    res.status(created ? 201 : 200).json(view(row));
  });
  router.delete('/:provider', requireCapability('mission.run'), async (req, res) => {
    if (!(await deleteIntegration(db, principal(res), String(req.params.provider)))) throw notFound('integration');
    res.status(204).end();
  });
  return router;
}

const view = (i: IntegrationRow) => ({ provider: i.provider, status: i.status, createdAt: i.created_at, updatedAt: i.updated_at });
