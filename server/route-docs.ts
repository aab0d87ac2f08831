import { z } from 'zod';
import { routeGroup, type RouteGroup } from './openapi/route-doc.ts';
import { adminRouteDocs } from './routes/admin.ts';
import { adminTenantRouteDocs } from './routes/admin-tenants.ts';
import { appRouteDocs } from './routes/apps.ts';
import { feedRouteDocs } from './routes/feed.ts';
import { integrationRouteDocs } from './routes/integrations.ts';
import { memoryRouteDocs } from './routes/memories.ts';
import { missionRouteDocs } from './routes/missions.ts';
import { missionFileRouteDocs } from './routes/mission-files.ts';
import { scheduleRouteDocs } from './routes/schedules.ts';
import { evalRouteDocs } from './routes/evals.ts';
import { webhookRouteDocs } from './routes/webhooks.ts';
import { profileRouteDocs } from './routes/profile.ts';
import { secretRouteDocs } from './routes/secrets.ts';
import { skillReadRouteDocs } from './routes/skill-reads.ts';
import { skillReviewRouteDocs } from './routes/skill-review.ts';
import { skillRouteDocs } from './routes/skills.ts';
import { approvalRouteDocs } from './routes/approvals.ts';
import { canvasRouteDocs, embedRouteDocs } from './routes/embeds.ts';
import { meRouteDocs } from './routes/me.ts';
import { consoleRouteDocs } from './console.ts';
import { mcpRouteDocs } from '../protocols/mcp-server.ts';
import { a2aRouteDocs } from '../protocols/a2a-server.ts';
import { agUiRouteDocs } from '../protocols/ag-ui-server.ts';

/** The routes outside /api/v1: probes, the contract itself, the docs page. */
const serviceRouteDocs = routeGroup('', 'service', [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process answers',
    access: 'public',
    responses: { 200: z.looseObject({ status: z.literal('ok') }) },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: Postgres and Temporal answer (503 when either does not)',
    access: 'public',
    responses: {
      200: z.looseObject({ status: z.literal('ok'), checks: z.looseObject({ database: z.boolean(), temporal: z.boolean() }) }),
      503: z.looseObject({ status: z.literal('unavailable'), checks: z.looseObject({ database: z.boolean(), temporal: z.boolean() }) }),
    },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of this API process (the worker serves its own on WORKER_METRICS_PORT)',
    access: 'public',
    responses: { 200: { media: 'text/plain', body: 'text' } },
  },
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    summary: 'This document',
    access: 'public',
    responses: { 200: z.looseObject({ openapi: z.string() }) },
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'Interactive reference (Swagger UI) over this document',
    access: 'public',
    responses: { 301: { media: 'none' } },
  },
  {
    method: 'get',
    path: '/docs/swagger-initializer.js',
    summary: 'The docs page script that points Swagger UI at this document',
    access: 'public',
    responses: { 200: { media: 'text/javascript', body: 'text' } },
  },
]);

/**
 * Every route's documentation, one group per router. A new router adds its group here: the coverage test
 * (test/integration/openapi.test.ts) names each mounted route that has none and each documented one not mounted.
 */
export const ROUTE_DOCS: RouteGroup[] = [
  serviceRouteDocs,
  adminRouteDocs,
  ...adminTenantRouteDocs,
  appRouteDocs,
  secretRouteDocs,
  missionRouteDocs,
  missionFileRouteDocs,
  scheduleRouteDocs,
  webhookRouteDocs,
  skillRouteDocs,
  skillReviewRouteDocs,
  skillReadRouteDocs,
  ...evalRouteDocs,
  profileRouteDocs,
  memoryRouteDocs,
  integrationRouteDocs,
  feedRouteDocs,
  approvalRouteDocs,
  embedRouteDocs,
  canvasRouteDocs,
  meRouteDocs,
  consoleRouteDocs,
  mcpRouteDocs,
  ...a2aRouteDocs,
  agUiRouteDocs,
];
