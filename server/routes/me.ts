import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { z } from 'zod';
import { authenticate, principal } from '../auth.ts';
import { routeGroup } from '../openapi/route-doc.ts';

/** The OpenAPI documentation of the route below. */
export const meRouteDocs = routeGroup('/api/v1/me', 'keys', [
  {
    method: 'get',
    path: '/',
    summary: 'Who the key acts for, its capabilities, and where the Temporal Web UI is',
    access: { capabilities: [] },
    responses: {
      200: z.looseObject({
        tenantId: z.string(),
        userId: z.string(),
        capabilities: z.array(z.string()),
        temporal: z.looseObject({ namespace: z.string(), uiUrl: z.string().optional() }),
      }),
    },
  },
]);

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
