import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal } from '../auth.ts';

/** Who the key acts for and what it may do, so a client can offer only what the API would allow. */
export function meRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(deps.db));
  router.get('/', (_req, res) => {
    const { tenantId, userId, capabilities } = principal(res);
    res.json({
      tenantId,
      userId,
      capabilities,
      temporal: { namespace: deps.config.temporal.namespace, ...(deps.temporalUiUrl ? { uiUrl: deps.temporalUiUrl } : {}) },
    });
  });
  return router;
}
