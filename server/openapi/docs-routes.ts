import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import type { OpenApiDocument } from './openapi-document.ts';

/** swagger-ui-dist's files, served from node_modules: the page loads nothing from elsewhere. */
const SWAGGER_UI_DIR = dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')));

// Replaces the distribution's initializer, which points at the petstore example.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

/** `GET /api/v1/openapi.json` (the contract) and `/docs` (Swagger UI over it). */
export function openApiRouter(document: OpenApiDocument): Router {
  const router = Router();
  const body = JSON.stringify(document);
  router.get('/api/v1/openapi.json', (_req, res) => void res.type('application/json').send(body));
  router.get('/docs', (req, res, next) =>
    req.path === '/docs' && req.originalUrl.endsWith('/docs') ? res.redirect(301, '/docs/') : next(),
  );
  router.get('/docs/swagger-initializer.js', (_req, res) => void res.type('text/javascript').send(INITIALIZER));
  router.use('/docs', express.static(SWAGGER_UI_DIR, { index: 'index.html', fallthrough: true }));
  return router;
}
