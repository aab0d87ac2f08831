import { z } from 'zod';
import { Router, type Response } from 'express';
import type { Owner } from '../../db/owner.ts';
import type { AppDefinition, ToolDefinition } from '../../tools/app-registry.ts';
import { appEnabled, gatherAvailability, toolAvailability, type AvailabilityFacts } from '../../tools/availability.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, isAdminRequest, principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { routeGroup } from '../openapi/route-doc.ts';

// Users see each tool's availability (and reason); the admin key sees the declarations and what was skipped.
const toolSchema = z.looseObject({
  name: z.string(),
  qualifiedName: z.string(),
  description: z.string(),
  inputSchema: z.unknown(),
  timeoutS: z.number(),
  executor: z.enum(['http', 'mcp', 'client']).describe("`client`: run by the mission's caller (`runs: client`), no URL"),
  outputSchema: z.unknown().optional().describe("A client tool's `output_schema`: its results are checked against it"),
  available: z.boolean().optional(),
  reason: z.string().optional(),
});
const appSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  providers: z.array(z.looseObject({ name: z.string() })),
  tools: z.array(toolSchema),
});
const access = { capabilities: ['mission.read' as const], orAdmin: true as const };
/** The OpenAPI documentation of the routes below. */
export const appRouteDocs = routeGroup('/api/v1/apps', 'apps', [
  {
    method: 'get',
    path: '/',
    summary: 'Installed apps and tools, with availability for the caller',
    access,
    responses: { 200: z.looseObject({ items: z.array(appSchema) }) },
  },
  { method: 'get', path: '/:appId', summary: 'One app', access, responses: { 200: appSchema } },
  { method: 'get', path: '/:appId/tools/:tool', summary: 'One tool', access, responses: { 200: toolSchema } },
]);

/**
 * The app catalogue. With an API key: every installed app and tool with its availability for the caller (and the
 * reason when unavailable). With the admin key: the declarations, plus the tools and apps skipped at load with why.
 */
export function appsRouter(deps: ApiDeps): Router {
  const router = Router();
  const authenticateUser = authenticate(deps.db);
  const canRead = requireCapability('mission.read');
  router.use((req, res, next) => {
    res.locals.admin = isAdminRequest(req.get('authorization'), deps.config.adminKey);
    next();
  });
  // Returned, so Express 5 routes a rejection to the error middleware.
  router.use((req, res, next) => (res.locals.admin ? next() : authenticateUser(req, res, next)));
  router.use((req, res, next) => (res.locals.admin ? next() : canRead(req, res, next)));

  router.get('/', async (_req, res) => {
    if (res.locals.admin) {
      return void res.json({
        items: deps.registry.apps.map(adminView),
        failed: deps.registry.errors.map((e) => ({ appId: e.appId, error: e.message })),
      });
    }
    const facts = await factsFor(deps, res, deps.registry.listTools());
    res.json({ items: deps.registry.apps.map((app) => userView(app, facts)) });
  });

  router.get('/:appId', async (req, res) => {
    const app = deps.registry.getApp(String(req.params.appId));
    if (!app) throw notFound('app');
    if (res.locals.admin) return void res.json(adminView(app));
    res.json(userView(app, await factsFor(deps, res, app.tools)));
  });

  // A skipped tool is not in the registry, so it answers 404 like any unknown one.
  router.get('/:appId/tools/:tool', async (req, res) => {
    const app = deps.registry.getApp(String(req.params.appId));
    const tool = app?.tools.find((t) => t.name === String(req.params.tool));
    if (!app || !tool) throw notFound('tool');
    if (res.locals.admin) return void res.json(toolView(tool));
    res.json(userToolView(tool, app, await factsFor(deps, res, [tool])));
  });
  return router;
}

async function factsFor(deps: ApiDeps, res: Response, tools: readonly ToolDefinition[]): Promise<AvailabilityFacts> {
  const { tenantId, userId } = principal(res);
  const owner: Owner = { tenantId, userId };
  return gatherAvailability(deps, owner, tools);
}

const providerView = (p: AppDefinition['providers'][number]) => ({
  name: p.name,
  id: p.id,
  noApiKey: p.noApiKey,
  ...(p.health ? { health: { url: p.health.url, intervalS: p.health.intervalS } } : {}),
});

const toolView = (t: ToolDefinition) => ({
  name: t.name,
  qualifiedName: t.qualifiedName,
  description: t.description,
  inputSchema: t.inputSchema,
  timeoutS: t.timeoutS,
  executor: t.mcp ? 'mcp' : t.client ? 'client' : 'http',
  ...(t.client?.outputSchema ? { outputSchema: t.client.outputSchema } : {}),
  ...(t.approval ? { approval: 'required' } : {}),
  providers: t.providers.map((p) => p.id),
  ...(t.requiresAccount !== undefined ? { requiresAccount: t.requiresAccount } : {}),
});

function userToolView(tool: ToolDefinition, app: AppDefinition, facts: AvailabilityFacts) {
  const unavailable = toolAvailability(tool, app, facts);
  return {
    ...toolView(tool),
    available: unavailable === undefined,
    ...(unavailable ? { reason: unavailable.reason, ...(unavailable.provider ? { provider: unavailable.provider } : {}) } : {}),
  };
}

function userView(app: AppDefinition, facts: AvailabilityFacts) {
  return {
    id: app.id,
    name: app.name,
    description: app.description,
    enabled: appEnabled(app, facts.switches),
    providers: app.providers.map((p) => ({
      ...providerView(p),
      // Where the caller's key would come from (never the key itself); null: none found.
      ...(p.noApiKey ? {} : { keySource: facts.keys.get(p.id) ?? null }),
    })),
    ...(app.requiresAccount !== undefined
      ? { requiresAccount: app.requiresAccount, connected: facts.accounts.has(app.requiresAccount) }
      : {}),
    tools: app.tools.map((t) => userToolView(t, app, facts)),
  };
}

const adminView = (app: AppDefinition) => ({
  id: app.id,
  name: app.name,
  description: app.description,
  defaultEnabled: app.defaultEnabled,
  ...(app.mcp ? { mcp: mcpView(app.mcp) } : {}),
  providers: app.providers.map(providerView),
  ...(app.requiresAccount !== undefined ? { requiresAccount: app.requiresAccount } : {}),
  tools: app.tools.map(toolView),
  skipped: app.skipped.map((s) => ({ name: s.name, qualifiedName: s.qualifiedName, error: s.error })),
});

// Where the server is, never its headers or environment (they may hold secrets).
const mcpView = (m: NonNullable<AppDefinition['mcp']>) =>
  m.transport === 'stdio' ? { transport: m.transport, command: m.command } : { transport: m.transport, url: m.url };
