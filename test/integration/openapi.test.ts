import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { fullPath } from '../../server/openapi/openapi-document.ts';
import { ROUTE_DOCS } from '../../server/route-docs.ts';
import { mountedRoutes } from '../helpers/mounted-routes.ts';
import { checkResponse } from '../../testkit/openapi-conformance.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('the OpenAPI document and /docs', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({ worker: false });
  });
  after(() => stack?.stop());

  it('serves an OpenAPI 3.1 document that a real validator accepts', async () => {
    const res = await fetch(`${stack.url}/api/v1/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    // The contract's essentials: the error shape, the bearer scheme, capabilities per route, the SSE stream.
    assert.deepEqual(Object.keys(doc.components.schemas.Error.properties), ['error']);
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
    const start = doc.paths['/api/v1/missions'].post;
    assert.deepEqual(start['x-cadenza-access'], { capabilities: ['mission.run'] });
    assert.match(start.description, /mission\.run/);
    assert.ok(start.requestBody.content['application/json'].schema.required.includes('objective'));
    const events = doc.paths['/api/v1/missions/{id}/events'].get.responses['200'];
    assert.ok(events.content['text/event-stream']);
    // One schema per event type, durable and live apart, each type's data schema its own.
    const types = events.content['text/event-stream'].schema.oneOf.map((t: any) => [t.properties.event.const, t['x-cadenza-event']]); // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.deepEqual(Object.fromEntries(types), {
      status: 'durable',
      turn: 'durable',
      tool_start: 'durable',
      tool_end: 'durable',
      error: 'durable',
      tool_attempt: 'durable',
      embed: 'durable',
      approval_requested: 'durable',
      approval_decided: 'durable',
      message: 'durable',
      budget_reached: 'durable',
      context_compacted: 'durable',
      model_fallback: 'durable',
      provider_wait: 'durable',
      delegate: 'durable',
      client_tool_call: 'durable',
      output_rejected: 'durable',
      text_delta: 'live',
      reset: 'live',
      tool_progress: 'live',
    });
    const turn = events.content['text/event-stream'].schema.oneOf.find((t: any) => t.title === 'turn'); // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(turn.properties.data.contentSchema.properties.turn.type, 'integer');
    assert.deepEqual(start.requestBody.required, true);
    assert.equal(doc.paths['/api/v1/missions/{id}/retry'].post.requestBody.required, false, 'a retry may be sent without a body');
    const list = doc.paths['/api/v1/missions'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    assert.deepEqual(list, ['query:limit', 'query:cursor', 'query:status', 'query:skill', 'query:scheduleId']);
  });

  it('documents every mounted route, and nothing that is not mounted', () => {
    const mounted = new Set(mountedRoutes(stack.app));
    const documented = new Set(ROUTE_DOCS.flatMap((g) => g.routes.map((r) => `${r.method.toUpperCase()} ${fullPath(g, r)}`)));
    const undocumented = [...mounted].filter((r) => !documented.has(r));
    const unmounted = [...documented].filter((r) => !mounted.has(r));
    assert.deepEqual(undocumented, [], `mounted but missing from server/route-docs.ts: ${undocumented.join(', ')}`);
    assert.deepEqual(unmounted, [], `documented but not mounted: ${unmounted.join(', ')}`);
    assert.ok(mounted.size > 40, `only ${mounted.size} routes found: the router-stack walk is broken`);
  });

  it('serves Swagger UI at /docs from local files, pointed at the document', async () => {
    const redirect = await fetch(`${stack.url}/docs`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '/docs/');
    const page = await fetch(`${stack.url}/docs/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /swagger-ui-bundle\.js/);
    // Nothing loaded from elsewhere: every script and stylesheet is a relative path.
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.doesNotMatch(url!, /^(https?:)?\/\//, url);
    const bundle = await fetch(`${stack.url}/docs/swagger-ui-bundle.js`);
    assert.equal(bundle.status, 200);
    assert.ok((await bundle.arrayBuffer()).byteLength > 100_000);
    const init = await (await fetch(`${stack.url}/docs/swagger-initializer.js`)).text();
    assert.match(init, /url: '\/api\/v1\/openapi\.json'/);
  });

  it('the response check refuses a body or a status the document does not describe', async () => {
    const key = await stack.api.newKey();
    const created = await stack.api.createSkill(key, '---\nname: conform\ndescription: A skill.\n---\nDo it.\n');
    const ok = await stack.api.request('GET', `/api/v1/skills/${created.id}`, { key });
    assert.equal(ok.status, 200);
    assert.throws(
      () => checkResponse('GET', `/api/v1/skills/${created.id}`, 200, 'application/json', { ...ok.body, id: 42 }),
      /does not match/,
    );
    assert.throws(
      () => checkResponse('GET', `/api/v1/skills/${created.id}`, 202, 'application/json', ok.body),
      /not a documented response/,
    );
    assert.throws(() => checkResponse('GET', '/api/v1/missions/x', 404, 'application/json', { message: 'flat' }), /does not match/);
    checkResponse('GET', '/api/v1/skills/discover', 200, 'application/json', { items: [], suppressed: [] });
  });
});
