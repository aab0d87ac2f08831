import type { Request } from 'express';

const readers = new WeakMap<Request, () => string | null>();

/**
 * The pattern of the route that matched (`/api/v1/missions/:id`), null when none did. Read when the router sets
 * `req.route`: by the time an error has travelled to the error middleware, the router has already reset `baseUrl`.
 * Installed once per request, so the request log and the request's span read the same pattern.
 */
export function capturePattern(req: Request): () => string | null {
  const known = readers.get(req);
  if (known) return known;
  let pattern: string | null = null;
  let current: unknown;
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set(route: { path?: unknown } | undefined) {
      current = route;
      const path = typeof route?.path === 'string' ? route.path : '';
      pattern = req.baseUrl && path === '/' ? req.baseUrl : `${req.baseUrl}${path}`;
    },
  });
  const read = () => pattern;
  readers.set(req, read);
  return read;
}
