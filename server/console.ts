import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler } from 'express';
import { routeGroup } from './openapi/route-doc.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = join(root, 'console');

/** The browser libraries the console loads: one file each of an installed package (node_modules/), served from this process. */
const VENDOR: Record<string, string> = {
  'marked.js': 'marked/lib/marked.esm.js',
  'purify.js': 'dompurify/dist/purify.es.mjs',
  'vega.js': 'vega/build/vega.min.js',
  'vega-lite.js': 'vega-lite/build/vega-lite.min.js',
  'vega-embed.js': 'vega-embed/build/vega-embed.min.js',
};

/**
 * Script only from this origin, no inline script, no plugins, no framing: a skill body or a tool result shown in the
 * page cannot run code even if sanitising missed something. `unsafe-eval` is there for Vega alone, which compiles
 * chart expressions with `Function`; inline script (the injection vector) stays refused.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({ 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
  next();
};

/** The OpenAPI documentation of the console's one route (its pages are static files under `/`). */
export const consoleRouteDocs = routeGroup('', 'console', [
  {
    method: 'get',
    path: '/vendor/:file',
    summary: 'A browser library of the mission console at / (marked, DOMPurify, Vega), served from the installed package',
    access: 'public',
    responses: { 200: { media: 'text/javascript', body: 'text' } },
  },
]);

/** The mission console: static files served at `/` (no build step), talking to the public API with the user's key. */
export function consoleRouter(): Router {
  const router = Router();
  router.use(securityHeaders);
  router.get('/vendor/:file', (req, res, next) => {
    const file = VENDOR[req.params.file];
    if (!file) return next();
    res.type('text/javascript').sendFile(join(root, 'node_modules', file), { maxAge: '1h' });
  });
  router.use(express.static(consoleDir, { index: 'index.html', maxAge: 0 }));
  return router;
}
