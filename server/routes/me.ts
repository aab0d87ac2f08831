import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { z } from 'zod';
import { authenticate, principal } from '../auth.ts';
import { routeGroup } from '../openapi/route-doc.ts';
import { ownerFileUsage } from '../../db/mission-files.ts';

/** The OpenAPI documentation of the route below. */
export const meRouteDocs = routeGroup('/api/v1/me', 'keys', [
  {
    method: 'get',
    path: '/',
    summary: 'Who the key acts for, its capabilities, where the Temporal Web UI is, and the storage its missions use',
    access: { capabilities: [] },
    responses: {
      200: z.looseObject({
        tenantId: z.string(),
        userId: z.string(),
        capabilities: z.array(z.string()),
        temporal: z.looseObject({ namespace: z.string(), uiUrl: z.string().optional() }),
        storage: z.looseObject({ files: z.number().int(), fileBytes: z.number().int() }),
      }),
    },
  },
]);

/**
 * Who the key acts for and what it may do, so a client can offer only what the API would allow; and the storage of
 * its missions' files (each file counted at its size, even when two share their bytes).
 */
export function meRouter(deps: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(deps.db));
  router.get('/', async (_req, res) => {
    const { tenantId, userId, capabilities } = principal(res);
    const files = await ownerFileUsage(deps.db, { tenantId, userId });
    res.json({
      tenantId,
      userId,
      capabilities,
      temporal: { namespace: deps.config.temporal.namespace, ...(deps.temporalUiUrl ? { uiUrl: deps.temporalUiUrl } : {}) },
      storage: { files: files.count, fileBytes: files.bytes },
    });
  });
  return router;
}
