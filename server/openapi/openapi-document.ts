import { z } from 'zod';
import { bodyRequired } from '../validate.ts';
import { errorSchema, type Access, type MediaReply, type RouteDoc, type RouteGroup } from './route-doc.ts';

/** An OpenAPI 3.1 document object (plain JSON). */
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
};
type Response = { description: string; content?: Record<string, { schema?: unknown }>; [key: string]: unknown };
type Operation = { responses: Record<string, Response>; [key: string]: unknown };

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** `/missions/:id/tools/:toolUseId` → `/missions/{id}/tools/{toolUseId}`. */
export const openApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');

/** The full Express path of a route of a group. */
export const fullPath = (group: RouteGroup, route: RouteDoc) => (route.path === '/' ? group.prefix || '/' : `${group.prefix}${route.path}`);

/** The OpenAPI 3.1 document of every route group, generated from the routes' own zod schemas. */
export function openApiDocument(groups: RouteGroup[], version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const group of groups) {
    for (const route of group.routes) {
      const path = openApiPath(fullPath(group, route));
      (paths[path] ??= {})[route.method] = operation(group, route);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cadenza API',
      version,
      description:
        'Durable AI skill missions. Every route under /api/v1 takes `Authorization: Bearer <api key>`; the capabilities a ' +
        'route needs are in its description and in `x-cadenza-access`. Admin routes take the admin key (CADENZA_ADMIN_KEY).',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(groups.map((g) => g.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: jsonSchema(errorSchema, 'output') },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key, or the admin key for admin routes' } },
    },
  };
}

function operation(group: RouteGroup, route: RouteDoc): Operation {
  // The group's prefix may hold parameters too (`/admin/tenants/:tenantId`).
  const pathNames = [...fullPath(group, route).matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const parameters = [
    ...pathNames.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: route.params?.shape[name] ? jsonSchema(route.params.shape[name] as z.ZodType, 'input') : { type: 'string' },
    })),
    ...Object.entries(route.query?.shape ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: !(schema as z.ZodType).safeParse(undefined).success,
      schema: jsonSchema(schema as z.ZodType, 'input'),
    })),
  ];
  const responses: Operation['responses'] = {};
  for (const [status, reply] of Object.entries(route.responses)) responses[status] = response(reply);
  responses.default = {
    description: 'An error: `{error: {code, message, details?}}`',
    content: { 'application/json': { schema: ERROR_REF } },
  };
  return {
    operationId: operationId(route.method, fullPath(group, route)),
    summary: route.summary,
    description: [route.description, accessText(route.access)].filter(Boolean).join('\n\n'),
    tags: [group.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route.body) } : {}),
    responses,
    security: route.access === 'public' ? [] : [{ bearer: [] }],
    'x-cadenza-access': route.access,
  };
}

function requestBody(body: NonNullable<RouteDoc['body']>) {
  // Required unless the schema takes no body at all: the test `validate` applies (server/validate.ts).
  if (body instanceof z.ZodType)
    return { required: bodyRequired(body), content: { 'application/json': { schema: jsonSchema(body, 'input') } } };
  const content: Record<string, { schema: unknown }> = {};
  for (const [media, schema] of Object.entries(body)) {
    content[media] = { schema: schema === 'text' ? { type: 'string' } : schema === 'binary' ? {} : jsonSchema(schema, 'input') };
  }
  return { required: true, content };
}

function response(reply: z.ZodType | MediaReply): Response {
  if (reply instanceof z.ZodType) return { description: 'OK', content: { 'application/json': { schema: jsonSchema(reply, 'output') } } };
  if (!('body' in reply)) return { description: 'No content' };
  if (reply.body === 'sse') {
    const events = [
      ...Object.entries(reply.events).map(([type, data]) => sseEvent(type, data, 'durable')),
      ...Object.entries(reply.live).map(([type, data]) => sseEvent(type, data, 'live')),
    ];
    return { description: reply.description, content: { [reply.media]: { schema: { oneOf: events } } } };
  }
  return {
    description: reply.description ?? 'OK',
    content: { [reply.media]: { schema: reply.body === 'text' ? { type: 'string' } : { contentMediaType: reply.media } } },
  };
}

/**
 * One event of a stream, as OpenAPI 3.1 tools read a `text/event-stream` schema: each event an object of its SSE
 * fields (`event`, `id`, `data`), `data` JSON text whose content is the type's own schema. A durable event's `id` is its
 * seq; a live one is sent without an `id` line (a client's last event id stays the last seq) and is never replayed.
 */
function sseEvent(type: string, data: z.ZodType, kind: 'durable' | 'live') {
  return {
    title: type,
    description:
      kind === 'durable'
        ? 'Durable: `id` is its seq, and a stream resumed with Last-Event-ID replays it.'
        : 'Live: sent without an `id` line, never replayed on resume.',
    type: 'object',
    required: ['event', 'data'],
    properties: {
      event: { const: type },
      id: { type: 'string', pattern: '^[0-9]+$' },
      data: { type: 'string', contentMediaType: 'application/json', contentSchema: jsonSchema(data, 'output') },
    },
    'x-cadenza-event': kind,
  };
}

function accessText(access: Access): string {
  if (access === 'public') return 'No key needed.';
  if (access === 'admin') return 'Admin key only.';
  const caps = access.capabilities.map((c) => `\`${c}\``).join(' and ');
  const key = caps ? `an API key with ${caps}` : 'any API key (no capability)';
  return `Requires ${key}${access.orAdmin ? ', or the admin key' : ''}.`;
}

const operationId = (method: string, path: string) =>
  method +
  path
    .replace(/^\/api\/v1/, '')
    .split(/[/-]/)
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `By${cap(part.slice(1))}` : cap(part)))
    .join('');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A zod schema as the JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of what it accepts or produces. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}
