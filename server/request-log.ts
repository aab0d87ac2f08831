import type { Request, RequestHandler } from 'express';
import type { Logger } from '../lib/logger.ts';

/**
 * Logs each request once it is answered (or its connection closes, for an SSE stream): method, route pattern (not
 * the URL with its ids and query), status, duration and request id. Never a body, a header or a key.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const route = capturePattern(req);
    let logged = false;
    const log = () => {
      if (logged) return;
      logged = true;
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        route: route(),
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}

/**
 * The pattern of the route that matched (`/api/v1/missions/:id`), null when none did. Read when the router sets
 * `req.route`: by the time an error has travelled to the error middleware, the router has already reset `baseUrl`.
 */
function capturePattern(req: Request): () => string | null {
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
  return () => pattern;
}
