import type { Express, RequestHandler } from 'express';
import { HttpError } from './errors.ts';

/** What the router package exposes of a layer: a path matcher, and a route or a nested router. */
type Layer = {
  match(path: string): false | { path: string; keys: string[] } | true;
  route?: { _methods(): string[] };
  handle: { stack?: Layer[] };
};

/**
 * Placed after every router: a request that reached it matched no route, so if its path is a route under other
 * methods, answer 405 with `Allow` listing them; else (no route there, or the route for this very method passed the
 * request on, as a missing static file does) it falls through to the 404.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, res, next) => {
    const allowed = allowedMethods(app, req.path);
    if (allowed.length === 0 || allowed.includes(req.method)) return next();
    res.set('allow', allowed.join(', '));
    throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`);
  };
}

/**
 * Placed before every router: `OPTIONS` on any route answers 204 with `Allow` listing every method of every router
 * mounted there. (Express answers it per router, so a path two routers share listed only the last one's methods.)
 */
export function answerOptions(app: Express): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = allowedMethods(app, req.path);
    if (allowed.length === 0) return next();
    res.set('allow', allowed.join(', ')).status(204).end();
  };
}

/** The methods some route answers at `path`, sorted, uppercase. */
function allowedMethods(app: Express, path: string): string[] {
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  return [...methodsAt(stack, path)].map((m) => m.toUpperCase()).sort();
}

/**
 * Every method some route answers at `path`, nested routers included. A route matched by literal segments only hides
 * the routes that matched it through a parameter: `/skills/import` is the import route, not `/skills/:id` with the id
 * `import`, so it allows POST alone (the document's view, where a literal path wins too).
 */
function methodsAt(stack: Layer[], path: string): Set<string> {
  const found: Array<{ method: string; literal: boolean }> = [];
  walk(stack, path, true, found);
  const literal = found.some((f) => f.literal);
  return new Set(found.filter((f) => f.literal || !literal).map((f) => f.method));
}

function walk(stack: Layer[], path: string, literal: boolean, found: Array<{ method: string; literal: boolean }>): void {
  for (const layer of stack) {
    const m = layer.match(path);
    if (!m) continue;
    const literalHere = literal && (m === true || m.keys.length === 0);
    if (layer.route) layer.route._methods().forEach((method) => found.push({ method, literal: literalHere }));
    else if (layer.handle.stack) walk(layer.handle.stack, path.slice((m === true ? '' : m.path).length) || '/', literalHere, found);
  }
}
