import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { PROVIDER_ID_PATTERN, providerId } from '../contracts/names.ts';
import type { SecretScope } from '../secrets/secret-backend.ts';
import type { ApiDeps } from './deps.ts';
import { HttpError, notFound } from './errors.ts';
import { validate } from './validate.ts';
import { timestamp, type Access, type RouteDoc } from './openapi/route-doc.ts';

// Printable ASCII only: a key goes into an HTTP header, where control characters would split or break it.
const secretBody = z
  .object({
    value: z
      .string()
      .min(1, 'must not be empty')
      .max(8192, 'must be at most 8192 characters')
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII (no control characters or line breaks)')
      .refine((v) => v.trim() === v, 'must not start or end with spaces'),
  })
  .strict();

/**
 * The provider of `:provider`, as its id (`Brave` → `brave`); 400 when malformed, 404 when no installed app uses it with
 * a key (there is no such key to read, write or delete).
 */
function providerParam(deps: Pick<ApiDeps, 'registry'>, req: Request): string {
  const id = providerId(String(req.params.provider));
  if (!PROVIDER_ID_PATTERN.test(id)) {
    throw new HttpError('validation_failed', 'invalid provider: letters and digits expected', {
      fields: [{ field: 'provider', message: 'letters and digits expected' }],
    });
  }
  const keyed = new Set(deps.registry.apps.flatMap((a) => a.providers.filter((p) => !p.noApiKey).map((p) => p.id)));
  if (!keyed.has(id)) {
    throw new HttpError('not_found', `no installed app uses provider '${id}' with an API key`, {
      fields: [{ field: 'provider', message: `known providers: ${[...keyed].sort().join(', ') || '(none)'}` }],
    });
  }
  return id;
}

const secretView = z.looseObject({ provider: z.string(), setAt: timestamp });
// As the document states it: any name with a letter or digit becomes a provider id (`providerId`).
const provider = z.string().regex(/[A-Za-z0-9]/, 'letters and digits expected');
/**
 * The OpenAPI documentation of the routes mountProviderSecretRoutes mounts, for one scope's access; `scope`: the path
 * parameters of the prefix it is mounted under (a tenant's id).
 */
export const providerSecretRouteDocs = (read: Access, write: Access, scope: z.ZodRawShape = {}): RouteDoc[] => {
  const params = z.object({ ...scope, provider });
  return [
    {
      method: 'get',
      path: '/',
      params,
      summary: 'Providers with a stored key (never the values)',
      access: read,
      responses: { 200: z.looseObject({ items: z.array(secretView) }) },
    },
    { method: 'get', path: '/:provider', summary: "When a provider's key was set", access: read, params, responses: { 200: secretView } },
    {
      method: 'put',
      path: '/:provider',
      summary: "Store a provider's key (write-only)",
      access: write,
      params,
      body: secretBody,
      responses: { 200: secretView, 201: secretView },
    },
    {
      method: 'delete',
      path: '/:provider',
      summary: "Delete a provider's key",
      access: write,
      params,
      responses: { 204: { media: 'none' } },
    },
  ];
};

/**
 * `GET /`, `GET|PUT|DELETE /:provider` over the secret store for one scope (the caller's, or a tenant's for admins).
 * Values are write-only: no response, log line or error message ever holds one.
 */
export function mountProviderSecretRoutes(
  router: Router,
  deps: Pick<ApiDeps, 'secrets' | 'registry'>,
  scopeOf: (req: Request, res: Response) => SecretScope,
  guards: { read: RequestHandler[]; write: RequestHandler[] } = { read: [], write: [] },
) {
  const view = (provider: string, setAt: Date) => ({ provider, setAt });
  router.get('/', ...guards.read, async (req, res) => {
    res.json({ items: (await deps.secrets.list(scopeOf(req, res))).map((s) => view(s.provider, s.setAt)) });
  });
  router.get('/:provider', ...guards.read, async (req, res) => {
    const provider = providerParam(deps, req);
    const found = (await deps.secrets.list(scopeOf(req, res))).find((s) => s.provider === provider);
    if (!found) throw notFound('key');
    res.json(view(found.provider, found.setAt));
  });
  router.put('/:provider', ...guards.write, validate('body', secretBody), async (req, res) => {
    const provider = providerParam(deps, req);
    if (!deps.secrets.writable)
      throw new HttpError('unavailable', 'provider keys cannot be stored: SECRETS_MASTER_KEY is not set on this server');
    const { value } = res.locals.body as z.infer<typeof secretBody>;
    const { setAt, created } = await deps.secrets.put(scopeOf(req, res), provider, value);
    res.status(created ? 201 : 200).json(view(provider, setAt));
  });
  router.delete('/:provider', ...guards.write, async (req, res) => {
    if (!(await deps.secrets.delete(scopeOf(req, res), providerParam(deps, req)))) throw notFound('key');
    res.status(204).end();
  });
}
