import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { mountProviderSecretRoutes, providerSecretRouteDocs } from '../provider-secret-routes.ts';
import { routeGroup } from '../openapi/route-doc.ts';

/** The OpenAPI documentation of the caller's provider-key routes. */
export const secretRouteDocs = routeGroup(
  '/api/v1/secrets',
  'secrets',
  providerSecretRouteDocs({ capabilities: ['mission.read'] }, { capabilities: ['mission.run'] }),
);

/** The caller's own provider keys: first in the lookup order (user → tenant → server). */
export function secretsRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(deps.db));
  mountProviderSecretRoutes(router, deps, (_req, res) => ({ tenantId: principal(res).tenantId, userId: principal(res).userId }), {
    read: [requireCapability('mission.read')],
    write: [requireCapability('mission.run')],
  });
  return router;
}
