import type { Express, RequestHandler } from 'express';
import { HttpError } from './errors.ts';

/** What the router package exposes of a layer: a path matcher, and a route or a nested router. */
type Layer = {
  match(path: string): false | { path: string } | true;
  path?: string;
  route?: { _methods(): string[] };
  handle: { stack?: Layer[] };
};

/**
 * Placed after every router: a request that reached it matched no route, so if its path is a route under other
 * methods, answer 405 with `Allow` listing them; else it falls through to the 404.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, res, next) => {
    const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
    const allowed = [...methodsAt(stack, req.path)].sort();
    if (allowed.length === 0) return next();
    res.set('allow', allowed.join(', '));
    throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`);
  };
}

/** Every method some route answers at `path`, nested routers included. */
function methodsAt(stack: Layer[], path: string, found = new Set<string>()): Set<string> {
  for (const layer of stack) {
    const m = layer.match(path);
    if (!m) continue;
    if (layer.route) layer.route._methods().forEach((method) => found.add(method));
    else if (layer.handle.stack) {
      const matched = typeof m === 'object' ? m.path : (layer.path ?? '');
      methodsAt(layer.handle.stack, path.slice(matched.length) || '/', found);
    }
  }
  return found;
}
