import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { mountProviderSecretRoutes } from '../provider-secret-routes.ts';

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
