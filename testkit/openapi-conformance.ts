import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument, type OpenApiDocument } from '../server/openapi/openapi-document.ts';
import { ROUTE_DOCS } from '../server/route-docs.ts';

/** The document the server serves, built from the same route declarations. */
export const OPENAPI: OpenApiDocument = openApiDocument(ROUTE_DOCS, 'test');

type Operation = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
/** One event type of a stream (server/openapi/openapi-document.ts `sseEvent`). */
type SseEvent = { properties: { event: { const: string }; data: { contentSchema: unknown } }; 'x-cadenza-event': 'durable' | 'live' };

// Formats (date-time, uuid) are checked by the patterns zod writes beside them; ajv needs no format plugin.
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ $id: 'openapi', components: OPENAPI.components });
const compiled = new Map<string, ValidateFunction>();
const compile = (key: string, schema: unknown) => {
  let fn = compiled.get(key);
  if (!fn) {
    // Component references point into the document added above.
    fn = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
    compiled.set(key, fn);
  }
  return fn;
};

const templates = Object.keys(OPENAPI.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
}));

/** The documented operation of a request, when the document has one (an undocumented route is the coverage test's). */
function operationOf(method: string, url: string): { template: string; op: Operation } | undefined {
  const path = new URL(url, 'http://x').pathname;
  // A literal segment wins over a parameter (`/skills/discover` over `/skills/{id}`).
  const found = templates
    .filter((t) => t.pattern.test(path))
    .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
  const op = found && (OPENAPI.paths[found.template]?.[method.toLowerCase()] as Operation | undefined);
  return found && op ? { template: found.template, op } : undefined;
}

/**
 * Throws when a JSON response does not match the document: a success status the route does not document, or a body
 * its schema (or the error schema) refuses. Called by the test API client on every response.
 */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  const found = operationOf(method, url);
  if (!found) return;
  const where = `${method} ${found.template} → ${status}`;
  const reply = found.op.responses[String(status)] ?? (status >= 400 ? found.op.responses.default : undefined);
  if (!reply) throw new Error(`OpenAPI: ${where} is not a documented response (documented: ${Object.keys(found.op.responses).join(', ')})`);
  if (!contentType?.includes('application/json')) return;
  const schema = reply.content?.['application/json']?.schema;
  if (schema === undefined)
    throw new Error(`OpenAPI: ${where} answered JSON where the document says ${Object.keys(reply.content ?? {}).join(', ') || 'no body'}`);
  const validate = compile(`${where}`, schema);
  if (!validate(body)) {
    throw new Error(
      `OpenAPI: ${where} does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

/**
 * Throws when an SSE event does not match the document: a type it does not list, an `id` on a live event or none on
 * a durable one, or data its schema for that type refuses.
 */
export function checkEvent(url: string, event: string, data: unknown, id?: string): void {
  const found = operationOf('GET', url);
  if (!found) return;
  const types = ((found.op.responses['200']?.content?.['text/event-stream']?.schema as { oneOf?: SseEvent[] }).oneOf ?? []) as SseEvent[];
  const type = types.find((t) => t.properties.event.const === event);
  if (type === undefined) throw new Error(`OpenAPI: SSE event type '${event}' of ${found.template} is not documented`);
  const live = type['x-cadenza-event'] === 'live';
  if (live && id !== undefined) throw new Error(`OpenAPI: the live SSE event '${event}' came with an id (${id})`);
  // The stream's own `error` (its mission's workflow is gone) is the one durable type that may come without an id.
  if (!live && id === undefined && event !== 'error') throw new Error(`OpenAPI: the durable SSE event '${event}' came without an id`);
  const validate = compile(`sse ${found.template} ${event}`, type.properties.data.contentSchema);
  if (!validate(data)) throw new Error(`OpenAPI: SSE event '${event}' does not match its schema: ${ajv.errorsText(validate.errors)}`);
}
