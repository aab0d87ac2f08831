import { Router, type Request } from 'express';
import { z } from 'zod';
import { setTenantApp, tenantAppSwitches } from '../../db/tenant-apps.ts';
import { appEnabled } from '../../tools/availability.ts';
import type { ApiDeps } from '../deps.ts';
import { requireAdmin } from '../auth.ts';
import { HttpError, notFound } from '../errors.ts';
import { mountProviderSecretRoutes, providerSecretRouteDocs } from '../provider-secret-routes.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';

const tenantId = z
  .string()
  .min(1)
  .max(128)
  // ASCII spelt out: other regex engines (Python's, which Schemathesis generates from) take Unicode letters for \w.
  .regex(/^[A-Za-z0-9_.@:-]+$/, 'letters, digits and . _ @ : - only');

function tenantParam(req: Request): string {
  const parsed = tenantId.safeParse(req.params.tenantId);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? 'invalid';
    throw new HttpError('validation_failed', `invalid tenantId: ${message}`, { fields: [{ field: 'tenantId', message }] });
  }
  return parsed.data;
}

const appSwitch = z.looseObject({
  tenantId: z.string(),
  appId: z.string(),
  enabled: z.boolean(),
  defaultEnabled: z.boolean(),
  updatedAt: timestamp,
});
const tenantParams = z.object({ tenantId });
/** The OpenAPI documentation of the routes below. */
export const adminTenantRouteDocs = [
  routeGroup('/api/v1/admin/tenants/:tenantId/secrets', 'admin', providerSecretRouteDocs('admin', 'admin', { tenantId })),
  routeGroup('/api/v1/admin/tenants', 'admin', [
    {
      method: 'get',
      path: '/:tenantId/apps',
      summary: "The tenant's app switches",
      access: 'admin',
      params: tenantParams,
      responses: {
        200: z.looseObject({
          items: z.array(z.looseObject({ id: z.string(), defaultEnabled: z.boolean(), enabled: z.boolean(), decided: z.boolean() })),
        }),
      },
    },
    {
      method: 'post',
      path: '/:tenantId/apps/:appId/enable',
      summary: 'Enable an app for the tenant',
      access: 'admin',
      params: tenantParams,
      responses: { 200: appSwitch },
    },
    {
      method: 'post',
      path: '/:tenantId/apps/:appId/disable',
      summary: 'Disable an app for the tenant',
      access: 'admin',
      params: tenantParams,
      responses: { 200: appSwitch },
    },
  ]),
];

/** Admin API per tenant: the tenant's provider keys and its app switches, behind CADENZA_ADMIN_KEY. */
export function adminTenantsRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(requireAdmin(deps.config.adminKey));

  const secrets = Router({ mergeParams: true });
  mountProviderSecretRoutes(secrets, deps, (req) => ({ tenantId: tenantParam(req) }));
  router.use('/:tenantId/secrets', secrets);

  router.get('/:tenantId/apps', async (req, res) => {
    const switches = await tenantAppSwitches(deps.db, tenantParam(req));
    res.json({
      items: deps.registry.apps.map((app) => ({
        id: app.id,
        defaultEnabled: app.defaultEnabled,
        enabled: appEnabled(app, switches),
        decided: switches.has(app.id),
      })),
    });
  });

  // Stored now, read by the next mission's prepare (a running mission's calls see it too: the tool activity re-checks).
  for (const action of ['enable', 'disable'] as const) {
    router.post(`/:tenantId/apps/:appId/${action}`, async (req, res) => {
      const tenant = tenantParam(req);
      const app = deps.registry.getApp(String(req.params.appId));
      if (!app) throw notFound('app');
      const row = await setTenantApp(deps.db, tenant, app.id, action === 'enable');
      res.json({ tenantId: tenant, appId: app.id, enabled: row.enabled, defaultEnabled: app.defaultEnabled, updatedAt: row.updated_at });
    });
  }
  return router;
}
