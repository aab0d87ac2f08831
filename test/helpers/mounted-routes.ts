import type { Express } from 'express';

/** What the router package exposes of a layer: its path as written, and a route or a nested router. */
type Layer = { rawPath?: unknown; route?: { path: string; methods: Record<string, boolean> }; handle: { stack?: Layer[] } };

/** Every route the Express app answers, as `METHOD /full/:path`, read from its router stack (nested routers included). */
export function mountedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = join(prefix, layer.route.path);
        for (const method of Object.keys(layer.route.methods)) if (method !== '_all') found.push(`${method.toUpperCase()} ${path}`);
      } else if (layer.handle.stack) {
        walk(layer.handle.stack, join(prefix, typeof layer.rawPath === 'string' ? layer.rawPath : '/'));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...new Set(found)].sort();
}

const join = (prefix: string, path: string) => (path === '/' ? prefix || '/' : `${prefix === '/' ? '' : prefix}${path}`);
