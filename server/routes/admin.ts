import { Router } from 'express';
import { z } from 'zod';
import { CAPABILITIES, createApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo } from '../../db/api-keys.ts';
import type { ApiDeps } from '../deps.ts';
import { requireAdmin } from '../auth.ts';
import { cursorKey, cursorParam, nextCursor, UUID_KEY } from '../cursor.ts';
import { notFound } from '../errors.ts';
import { queryInt, validate } from '../validate.ts';
import { page, routeGroup, timestamp } from '../openapi/route-doc.ts';

const id = z
  .string()
  .min(1)
  .max(128)
  // ASCII spelt out: other regex engines (Python's, which Schemathesis generates from) take Unicode letters for \w.
  .regex(/^[A-Za-z0-9_.@:-]+$/, 'letters, digits and . _ @ : - only');
const newKey = z.object({ tenantId: id, userId: id, capabilities: z.array(z.enum(CAPABILITIES)).min(1) }).strict();
const listQuery = z
  .object({
    tenantId: id.optional(),
    userId: id.optional(),
    status: z.enum(['active', 'revoked']).optional(),
    limit: queryInt(1, 100).default(50),
    cursor: cursorParam('k', UUID_KEY).optional(),
  })
  .strict();

/** A key as the admin API shows it: never the secret (it was shown once, at creation) nor its hash. */
const keyView = (k: ApiKeyInfo) => ({
  id: k.id,
  prefix: k.key_prefix,
  tenantId: k.tenant_id,
  userId: k.user_id,
  capabilities: k.capabilities,
  createdAt: k.created_at,
  lastUsedAt: k.last_used_at,
  revokedAt: k.revoked_at,
});

const keyViewSchema = z.looseObject({
  id: z.uuid(),
  prefix: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  capabilities: z.array(z.enum(CAPABILITIES)),
  createdAt: timestamp,
  lastUsedAt: timestamp.nullable(),
  revokedAt: timestamp.nullable(),
});
/** The OpenAPI documentation of the routes below. */
export const adminRouteDocs = routeGroup('/api/v1/admin', 'admin', [
  {
    method: 'post',
    path: '/keys',
    summary: 'Issue an API key (shown once)',
    access: 'admin',
    body: newKey,
    responses: {
      201: z.looseObject({
        id: z.uuid(),
        key: z.string(),
        tenantId: z.string(),
        userId: z.string(),
        capabilities: z.array(z.enum(CAPABILITIES)),
      }),
    },
  },
  {
    method: 'get',
    path: '/keys',
    summary: 'List API keys (never their secrets)',
    access: 'admin',
    query: listQuery,
    responses: { 200: page(keyViewSchema) },
  },
  {
    method: 'delete',
    path: '/keys/:id',
    summary: 'Revoke an API key, effective at once',
    access: 'admin',
    responses: { 200: keyViewSchema },
  },
]);

/** Admin API behind CADENZA_ADMIN_KEY: issuing, listing and revoking API keys. */
export function adminRouter({ db, config }: ApiDeps): Router {
  const router = Router();
  router.use(requireAdmin(config.adminKey));
  router.post('/keys', validate('body', newKey), async (_req, res) => {
    const body = res.locals.body as z.infer<typeof newKey>;
    const { id: keyId, key } = await createApiKey(db, body);
    res.status(201).json({ id: keyId, key, tenantId: body.tenantId, userId: body.userId, capabilities: body.capabilities });
  });

  router.get('/keys', validate('query', listQuery), async (_req, res) => {
    const { limit, cursor, ...filter } = res.locals.query as z.infer<typeof listQuery>;
    const rows = await listApiKeys(db, filter, { limit, ...(cursor ? { afterId: cursorKey(cursor) } : {}) });
    res.json({ items: rows.map(keyView), nextCursor: nextCursor(rows, limit, 'k', (r) => r.id) });
  });

  // Effective at once: every request looks its key up afresh, so the next one with this key is a 401.
  router.delete('/keys/:id', async (req, res) => {
    const revoked = await revokeApiKey(db, String(req.params.id));
    if (!revoked) throw notFound('API key');
    res.json(keyView(revoked));
  });
  return router;
}
