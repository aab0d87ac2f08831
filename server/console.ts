import { readFileSync } from 'node:fs';
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
 * Vega's CSP-compliant expression interpreter, an ES module whose one import (`vega-util`) the page already has as
 * part of the `vega` global: the import becomes a read of that global, so the browser needs no import map (an inline
 * script, which the CSP refuses). Rewritten once at start; a release that changes the import fails the start loudly.
 */
function vegaInterpreterModule(): string {
  const source = readFileSync(join(root, 'node_modules', 'vega-interpreter/build/vega-interpreter.js'), 'utf8');
  const fromVegaUtil = /^import \{([^}]+)\} from 'vega-util';$/m;
  if (!fromVegaUtil.test(source)) throw new Error('vega-interpreter no longer imports vega-util as expected');
  return source.replace(fromVegaUtil, (_line, names: string) => `const {${names}} = globalThis.vega;`);
}

/**
 * Script only from this origin, no inline script, no eval, no plugins, no framing: a skill body or a tool result
 * shown in the page cannot run code even if sanitising missed something. Vega would compile a chart's expressions
 * with `Function`; the console has it parse them to an AST and run them through `vega-interpreter` instead.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
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
  // Files served as rewritten at start rather than as installed.
  const rewritten: Record<string, string> = { 'vega-interpreter.js': vegaInterpreterModule() };
  router.use(securityHeaders);
  router.get('/vendor/:file', (req, res, next) => {
    const text = rewritten[req.params.file];
    if (text) return void res.type('text/javascript').set('cache-control', 'public, max-age=3600').send(text);
    const file = VENDOR[req.params.file];
    if (!file) return next();
    res.type('text/javascript').sendFile(join(root, 'node_modules', file), { maxAge: '1h' });
  });
  router.use(express.static(consoleDir, { index: 'index.html', maxAge: 0 }));
  return router;
}
