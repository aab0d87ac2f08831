import { missingSearchAttributes, registerCommands } from '../temporal/search-attributes.ts';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pingDatabase } from '../db/database.ts';
import type { ApiDeps } from './deps.ts';
import { errorMiddleware, HttpError } from './errors.ts';
import { adminRouter } from './routes/admin.ts';
import { adminTenantsRouter } from './routes/admin-tenants.ts';
import { appsRouter } from './routes/apps.ts';
import { approvalsRouter } from './routes/approvals.ts';
import { secretsRouter } from './routes/secrets.ts';
import { missionsRouter } from './routes/missions.ts';
import { missionFilesRouter } from './routes/mission-files.ts';
import { schedulesRouter } from './routes/schedules.ts';
import { evalsRouter } from './routes/evals.ts';
import { webhooksRouter } from './routes/webhooks.ts';
import { skillsRouter } from './routes/skills.ts';
import { feedRouter } from './routes/feed.ts';
import { canvasesRouter, embedsRouter } from './routes/embeds.ts';
import { integrationsRouter } from './routes/integrations.ts';
import { memoriesRouter } from './routes/memories.ts';
import { profileRouter } from './routes/profile.ts';
import { meRouter } from './routes/me.ts';
import { consoleRouter } from './console.ts';
import { mcpRouter } from '../protocols/mcp-server.ts';
import { a2aCardRouter, a2aRouter } from '../protocols/a2a-server.ts';
import { agUiRouter } from '../protocols/ag-ui-server.ts';
import { readBodies } from './body-parsers.ts';
import { answerOptions, methodNotAllowed } from './method-not-allowed.ts';
import { rejectNul } from './reject-nul.ts';
import { requestLog } from './request-log.ts';
import { traceRequests } from './trace-requests.ts';
import { openApiDocument } from './openapi/openapi-document.ts';
import { openApiRouter } from './openapi/docs-routes.ts';
import { ROUTE_DOCS } from './route-docs.ts';

/** `/readyz` answers within this, whatever state Postgres and Temporal are in. */
const READY_CHECK_MS = 800;

/** The contract's version in the OpenAPI document: the package's. */
const API_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The HTTP API as an Express app (does not listen: the caller decides the port, tests use port 0). */
export function createHttpApi(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.set('x-request-id', res.locals.requestId);
    next();
  });
  if (deps.tracing) app.use(traceRequests(deps.tracing.tracer));
  app.use(requestLog(deps.logger));
  app.use(answerOptions(app));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  let attributesSeen = false; // once the namespace has them all, it keeps them
  app.get('/readyz', async (_req, res) => {
    const ns = deps.config.temporal.namespace;
    // Listing the search attributes every start sets also proves Temporal answers; once all were there, a ping will do.
    const askTemporal = () =>
      deps.temporal.withDeadline(Date.now() + READY_CHECK_MS, async () =>
        attributesSeen
          ? (await deps.temporal.workflowService.getSystemInfo({}), [])
          : missingSearchAttributes(deps.temporal.connection, ns),
      );
    const [database, missing] = await Promise.all([
      withinMs(READY_CHECK_MS, pingDatabase(deps.db)),
      valueWithinMs(READY_CHECK_MS, askTemporal()),
    ]);
    if (missing?.length === 0) attributesSeen = true;
    const ok = database && missing?.length === 0;
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ok' : 'unavailable',
      checks: { database, temporal: missing !== undefined, ...(missing ? { searchAttributes: missing.length === 0 } : {}) },
      ...(missing?.length ? { missingSearchAttributes: missing, register: registerCommands(ns, missing) } : {}),
    });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.use(openApiRouter(openApiDocument(ROUTE_DOCS, API_VERSION)));
  app.use('/api/v1/skills', readBodies(['json', 'markdown', 'zip'], deps.config));
  app.use('/api/v1', readBodies(['json'], deps.config), rejectNul);
  // The MCP face: the same keys and services, the protocol's own transport (protocols/).
  app.use('/mcp', readBodies(['json'], deps.config), mcpRouter(deps));
  // The A2A face: the service's public card, the caller's card and the JSON-RPC endpoint (the SDK reads its bodies).
  app.use(a2aCardRouter());
  app.use('/a2a', a2aRouter(deps));
  app.use('/ag-ui', readBodies(['json'], deps.config), agUiRouter(deps));
  app.use('/api/v1/admin/tenants', adminTenantsRouter(deps));
  app.use('/api/v1/admin', adminRouter(deps));
  app.use('/api/v1/apps', appsRouter(deps));
  app.use('/api/v1/secrets', secretsRouter(deps));
  // Before the missions router: it owns /missions/:id/tools/:toolUseId/approve|deny (each route authenticates itself).
  app.use('/api/v1', approvalsRouter(deps));
  // Before the missions router: it owns /missions/:id/files (each route authenticates itself).
  app.use('/api/v1/missions', missionFilesRouter(deps));
  app.use('/api/v1/missions', missionsRouter(deps));
  app.use('/api/v1/schedules', schedulesRouter(deps));
  app.use('/api/v1/webhooks', webhooksRouter(deps));
  // Before the skills router: it owns /skills/:id/evals (each route authenticates itself).
  app.use('/api/v1', evalsRouter(deps));
  app.use('/api/v1/skills', skillsRouter(deps));
  app.use('/api/v1/profile', profileRouter(deps));
  app.use('/api/v1/memories', memoriesRouter(deps));
  app.use('/api/v1/integrations', integrationsRouter(deps));
  app.use('/api/v1/activity', feedRouter(deps));
  app.use('/api/v1/me', meRouter(deps));
  app.use('/api/v1/embeds', embedsRouter(deps));
  app.use('/api/v1/canvases', canvasesRouter(deps));
  app.use(consoleRouter());
  app.use(methodNotAllowed(app));
  app.use(() => {
    throw new HttpError('not_found', 'no such route');
  });
  app.use(errorMiddleware(deps.logger));
  return app;
}

/** True when the check settles successfully within `ms` (a database connect that hangs counts as not ready). */
const withinMs = async (ms: number, check: Promise<unknown>): Promise<boolean> =>
  (await valueWithinMs(
    ms,
    check.then(() => true),
  )) === true;

/** The check's value when it settles successfully within `ms`; undefined otherwise. */
function valueWithinMs<T>(ms: number, check: Promise<T>): Promise<T | undefined> {
  return new Promise((ok) => {
    const timer = setTimeout(() => ok(undefined), ms);
    check
      .then(
        (value) => ok(value),
        () => ok(undefined),
      )
      .finally(() => clearTimeout(timer));
  });
}
