import { Router } from 'express';
import { z } from 'zod';
import { CAPABILITIES, createApiKey } from '../../db/api-keys.ts';
import type { ApiDeps } from '../deps.ts';
import { requireAdmin } from '../auth.ts';
import { validate } from '../validate.ts';

const id = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[\w.@:-]+$/, 'letters, digits and . _ @ : - only');
const newKey = z.object({ tenantId: id, userId: id, capabilities: z.array(z.enum(CAPABILITIES)).min(1) }).strict();

/** Admin API: issuing keys, behind CADENZA_ADMIN_KEY. */
export function adminRouter({ db, config }: ApiDeps): Router {
  const router = Router();
  router.use(requireAdmin(config.adminKey));
  router.post('/keys', validate('body', newKey), async (_req, res) => {
    const body = res.locals.body as z.infer<typeof newKey>;
    const { id: keyId, key } = await createApiKey(db, body);
    res.status(201).json({ id: keyId, key, tenantId: body.tenantId, userId: body.userId, capabilities: body.capabilities });
  });
  return router;
}
