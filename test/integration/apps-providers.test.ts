import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { sql } from 'kysely';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const APPS_DIR = fileURLToPath(new URL('../fixtures/provider-apps', import.meta.url));
const secret = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;
const SERVER_BRAVE_KEY = secret('server-brave');
const systemOf = (r: RecordedRequest) => r.system;

describe('apps and providers: availability, provider keys, disabled apps, broken tools', () => {
  let stack: TestStack;
  /** Which bearer each web_search call carried, as the tool server saw it. */
  const bearers: string[] = [];

  before(async () => {
    stack = await startTestStack({
      env: { APPS_DIR, PROVIDER_KEY_BRAVE: SERVER_BRAVE_KEY, MAX_TOOLS_PER_MISSION: '3', LOG_LEVEL: 'debug' },
    });
    // The tool server accepts only the keys it was told about, as a real provider would.
    stack.tools.on('web_search', (_input, req) => {
      const auth = String(req.headers.authorization ?? '');
      bearers.push(auth.replace(/^Bearer /, ''));
      return auth.startsWith('Bearer ') && auth.length > 'Bearer '.length
        ? { body: { results: [`result for ${auth.slice(7, 14)}…`] } }
        : { status: 401, body: { error: 'missing key' } };
    });
    stack.tools.on('health', () => ({ body: { ok: true } }));
  });
  after(() => stack.stop());

  const newUser = (tenantId: string, userId = `u${randomBytes(4).toString('hex')}`) => stack.api.newKey(undefined, { tenantId, userId });
  const admin = (method: string, path: string, body?: unknown) =>
    stack.api.request(method, `/api/v1/admin/tenants${path}`, { key: stack.config.adminKey!, ...(body ? { body } : {}) });
  const toolOf = (apps: { body: { items: Array<{ id: string; tools: Array<{ name: string }> }> } }, q: string) => {
    const [appId, name] = q.split('.');
    return apps.body.items.find((a) => a.id === appId)?.tools.find((t) => t.name === name) as
      { available: boolean; reason?: string; provider?: string } | undefined;
  };

  /** Runs one mission whose model makes `calls` in its first turn, then answers; returns the mission and its model requests. */
  async function runWith(
    key: string,
    skill: string,
    tools: string[],
    calls: Array<{ name: string; input: Record<string, unknown> }>,
    o: { imported?: boolean } = {},
  ) {
    if (o.imported) {
      // Strict authoring refuses tools that are not installed; an import (then review) is how such a skill arrives.
      const imported = await stack.api.request('POST', '/api/v1/skills/import', {
        key,
        raw: skillMd({ name: skill, tools, maxTurns: 3 }),
        headers: { 'content-type': 'text/markdown' },
      });
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
      assert.equal((await stack.api.request('POST', `/api/v1/skills/${imported.body.id}/activate`, { key })).status, 200);
    } else {
      await stack.api.createSkill(key, skillMd({ name: skill, tools, maxTurns: 3 }));
    }
    const first = stack.model.requests.length;
    if (calls.length > 0) stack.model.enqueue({ reply: { toolUses: calls.map((c, i) => ({ id: `tu_${skill}_${i}`, ...c })) } });
    stack.model.enqueue({ reply: { text: 'done' } });
    const { id } = await stack.api.startMission(key, { skill, objective: `Run ${skill}.` });
    const mission = await stack.api.waitForEnd(key, id);
    return { id, mission, requests: stack.model.requests.slice(first) };
  }

  it('looks a key up user → tenant → server, and the tool receives exactly that key', async () => {
    const userKey = secret('user-brave');
    const tenantKey = secret('tenant-brave');
    const alice = await newUser('acme');
    const bob = await newUser('acme');
    const carol = await newUser('globex');
    assert.equal((await stack.api.request('PUT', '/api/v1/secrets/brave', { key: alice, body: { value: userKey } })).status, 201);
    assert.equal((await admin('PUT', '/acme/secrets/Brave', { value: tenantKey })).status, 201);

    const call = [{ name: 'search__web_search', input: { q: 'cadenza' } }];
    for (const [key, expected, skill] of [
      [alice, userKey, 'alice-search'],
      [bob, tenantKey, 'bob-search'],
      [carol, SERVER_BRAVE_KEY, 'carol-search'],
    ] as const) {
      const { mission } = await runWith(key, skill, ['search.web_search'], call);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.tools[0]?.status, 'completed', `${skill}: the tool ran`);
      assert.equal(bearers.at(-1), expected, `${skill} sent the key its lookup finds`);
    }
  });

  it('lists which providers have a key and when, never the value; DELETE removes it', async () => {
    const value = secret('listed');
    const dave = await newUser('acme');
    const put = await stack.api.request('PUT', '/api/v1/secrets/tavily', { key: dave, body: { value } });
    assert.equal(put.status, 201);
    assert.deepEqual(Object.keys(put.body).sort(), ['provider', 'setAt']);
    assert.equal((await stack.api.request('PUT', '/api/v1/secrets/tavily', { key: dave, body: { value: `${value}2` } })).status, 200);
    const list = await stack.api.request('GET', '/api/v1/secrets', { key: dave });
    assert.deepEqual(
      list.body.items.map((i: { provider: string }) => i.provider),
      ['tavily'],
    );
    assert.ok(!JSON.stringify(list.body).includes(value));
    assert.equal((await stack.api.request('GET', '/api/v1/secrets/tavily', { key: dave })).body.provider, 'tavily');
    const stored = await stack.db
      .selectFrom('provider_secrets')
      .select(['ciphertext', 'key_id'])
      .where('provider', '=', 'tavily')
      .execute();
    assert.ok(stored.length > 0 && stored.every((r) => !r.ciphertext.toString('latin1').includes(value)), 'only ciphertext at rest');
    assert.equal((await stack.api.request('DELETE', '/api/v1/secrets/tavily', { key: dave })).status, 204);
    assert.equal((await stack.api.request('DELETE', '/api/v1/secrets/tavily', { key: dave })).status, 404);
    assert.equal((await stack.api.request('GET', '/api/v1/secrets/tavily', { key: dave })).status, 404);
  });

  it('refuses bad keys and unknown providers with a 4xx that names the field and never echoes the value', async () => {
    const erin = await newUser('acme');
    const cases: Array<[string, unknown, number, string]> = [
      ['/api/v1/secrets/brave', { value: 'line\nbreak-key' }, 400, 'value'],
      ['/api/v1/secrets/brave', { value: '' }, 400, 'value'],
      ['/api/v1/secrets/brave', { value: 'k', extra: 1 }, 400, 'extra'],
      ['/api/v1/secrets/nominatim', { value: 'keyless-provider' }, 404, 'provider'],
      ['/api/v1/secrets/nosuch', { value: 'unknown-provider' }, 404, 'provider'],
      ['/api/v1/secrets/%20', { value: 'blank-provider' }, 400, 'provider'],
    ];
    for (const [path, body, status, field] of cases) {
      const res = await stack.api.request('PUT', path, { key: erin, body });
      assert.equal(res.status, status, `${path} ${JSON.stringify(body)}`);
      assert.ok(
        res.body.error.details.fields.some((f: { field: string }) => f.field === field),
        JSON.stringify(res.body),
      );
      assert.ok(!JSON.stringify(res.body).includes('break-key') && !JSON.stringify(res.body).includes('keyless-provider'));
    }
    const readOnly = await stack.api.newKey(['mission.read'], { tenantId: 'acme', userId: 'reader' });
    assert.equal((await stack.api.request('PUT', '/api/v1/secrets/brave', { key: readOnly, body: { value: 'x-key' } })).status, 403);
    assert.equal(
      (await stack.api.request('PUT', '/api/v1/admin/tenants/acme/secrets/brave', { key: erin, body: { value: 'x' } })).status,
      401,
    );
  });

  it('keeps a key out of workflow history, transcript rows, logs, events and responses', async () => {
    const value = secret('never-seen');
    const frank = await newUser('hooli');
    await stack.api.request('PUT', '/api/v1/secrets/brave', { key: frank, body: { value } });
    // A tool server that echoes the key back must not carry it into the transcript either.
    stack.tools.on('web_search', (_input, req) => ({ body: { echoed: String(req.headers.authorization) } }));
    try {
      const { id, mission } = await runWith(
        frank,
        'frank-search',
        ['search.web_search'],
        [{ name: 'search__web_search', input: { q: 'x' } }],
      );
      assert.equal(mission.status, 'completed');
      assert.ok(
        stack.tools.requests.some((r) => r.headers.authorization === `Bearer ${value}`),
        'the key did reach the tool',
      );

      const history = await stack.handle(id).fetchHistory();
      const bytes = Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish());
      assert.ok(bytes.length > 0 && !bytes.includes(value), 'not in workflow history');

      const { rows } = await sql<{ t: string }>`
        select content::text as t from mission_messages where mission_id = ${id}
        union all select output::text from tool_calls where mission_id = ${id}
        union all select coalesce(error, '') || coalesce(details::text, '') from feed where mission_id = ${id}
        union all select coalesce(system_prompt, '') || coalesce(catalog::text, '') || coalesce(tool_selection::text, '') from missions where id = ${id}`.execute(
        stack.db,
      );
      assert.ok(rows.length >= 3);
      assert.ok(
        rows.every((r) => !r.t.includes(value)),
        'not in transcript, tool outputs, feed or the mission row',
      );
      assert.ok(
        rows.some((r) => r.t.includes('[redacted]')),
        'the echoed key was redacted',
      );

      const events = await stack.api.readEvents(frank, id);
      const responses = [
        await stack.api.getMission(frank, id),
        await stack.api.request('GET', '/api/v1/secrets', { key: frank }),
        await stack.api.request('GET', '/api/v1/apps', { key: frank }),
        await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key: frank }),
      ];
      assert.ok(!JSON.stringify([events, responses.map((r) => r.body)]).includes(value), 'not in events or responses');
      assert.ok(stack.logLines.length > 0 && stack.logLines.every((l) => !l.includes(value)), 'not in logs');
    } finally {
      stack.tools.on('web_search', (_input, req) => {
        bearers.push(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
        return { body: { results: [] } };
      });
    }
  });

  it('shows each tool’s availability and reason for the caller in GET /apps; skipped tools 404 and are listed for admins', async () => {
    const gina = await newUser('initech');
    const apps = await stack.api.request('GET', '/api/v1/apps', { key: gina });
    assert.equal(apps.status, 200);
    assert.deepEqual(
      apps.body.items.map((a: { id: string }) => a.id),
      ['geo', 'mail', 'premium', 'search', 'toolbox'],
    );
    assert.equal(toolOf(apps, 'search.web_search')?.available, true);
    assert.equal(apps.body.items.find((a: { id: string }) => a.id === 'search').providers[0].keySource, 'server');
    assert.deepEqual(
      [toolOf(apps, 'search.deep_search'), toolOf(apps, 'premium.quote'), toolOf(apps, 'mail.search_mail')].map((t) => [
        t?.reason,
        t?.provider,
      ]),
      [
        ['no_key', 'tavily'],
        ['disabled', undefined],
        ['not_connected', 'google'],
      ],
    );
    assert.equal(toolOf(apps, 'geo.geocode')?.available, true, 'no_api_key: no key needed from the lookup');
    assert.equal(toolOf(apps, 'search.image_search'), undefined, 'a skipped tool is never listed to users');
    assert.equal((await stack.api.request('GET', '/api/v1/apps/search/tools/image_search', { key: gina })).status, 404);
    assert.equal((await stack.api.request('GET', '/api/v1/apps/search/tools/web_search', { key: gina })).body.available, true);
    assert.equal((await stack.api.request('GET', '/api/v1/apps/nope', { key: gina })).status, 404);

    const asAdmin = await stack.api.request('GET', '/api/v1/apps', { key: stack.config.adminKey! });
    const search = asAdmin.body.items.find((a: { id: string }) => a.id === 'search');
    assert.deepEqual(
      search.skipped.map((s: { name: string; error: string }) => [s.name, /input_schema: invalid JSON Schema/.test(s.error)]),
      [['image_search', true]],
    );
    assert.ok(
      stack.logLines.some((l) => {
        const e = JSON.parse(l);
        return e.level === 'error' && e.app === 'search' && e.tool === 'image_search' && /invalid JSON Schema/.test(e.reason);
      }),
      'logged as an error naming the app, the tool and the reason',
    );
    assert.equal((await stack.api.request('GET', '/api/v1/apps')).status, 401);
  });

  it('tells the mission and the model which requested tools are unavailable and why; the siblings of a broken tool work', async () => {
    const hank = await newUser('initech');
    const { id, mission, requests } = await runWith(
      hank,
      'degrade',
      ['search.web_search', 'search.image_search', 'search.deep_search', 'premium.quote', 'mail.search_mail', 'ghost.tool'],
      [{ name: 'search__web_search', input: { q: 'still works' } }],
      { imported: true },
    );
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0]?.status, 'completed', 'the sibling of the broken tool ran');
    assert.deepEqual(mission.unavailableTools, [
      { tool: 'search.image_search', reason: 'failed_to_load' },
      { tool: 'search.deep_search', reason: 'no_key', provider: 'tavily' },
      { tool: 'premium.quote', reason: 'disabled' },
      { tool: 'mail.search_mail', reason: 'not_connected', provider: 'google' },
      { tool: 'ghost.tool', reason: 'not_installed' },
    ]);
    assert.deepEqual(
      requests[0]!.toolNames.filter((n) => n.includes('__')),
      ['search__web_search'],
    );
    const system = systemOf(requests[0]!);
    const lines = system
      .slice(system.indexOf('## Tools unavailable'))
      .split('\n')
      .filter((l) => l.startsWith('- '));
    assert.equal(lines.length, 5, system);
    assert.match(lines[1]!, /^- search\.deep_search: unavailable \(no_key\): no API key for provider tavily/);
    assert.ok((await stack.api.getMission(hank, id)).body.unavailableTools.length === 5);
  });

  it('offers an app that ships disabled once an admin enables it, and hides a default one an admin disables', async () => {
    const ivy = await newUser('umbrella');
    const quote = async () => toolOf(await stack.api.request('GET', '/api/v1/apps', { key: ivy }), 'premium.quote');
    assert.equal((await quote())?.reason, 'disabled');
    const enabled = await admin('POST', '/umbrella/apps/premium/enable');
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.enabled, true);
    assert.equal((await quote())?.available, true);
    const { mission } = await runWith(ivy, 'quotes', ['premium.quote'], [{ name: 'premium__quote', input: { ticker: 'ACME' } }]);
    assert.equal(mission.tools[0]?.status, 'completed', 'the next mission has it');

    assert.equal((await admin('POST', '/umbrella/apps/geo/disable')).status, 200);
    const apps = await stack.api.request('GET', '/api/v1/apps', { key: ivy });
    assert.equal(toolOf(apps, 'geo.geocode')?.reason, 'disabled');
    const other = await newUser('initech');
    assert.equal(toolOf(await stack.api.request('GET', '/api/v1/apps', { key: other }), 'geo.geocode')?.available, true, 'per tenant');
    const listed = await admin('GET', '/umbrella/apps');
    assert.deepEqual(
      listed.body.items.filter((a: { decided: boolean }) => a.decided).map((a: { id: string; enabled: boolean }) => [a.id, a.enabled]),
      [
        ['geo', false],
        ['premium', true],
      ],
    );
    assert.equal((await admin('POST', '/umbrella/apps/nope/enable')).status, 404);
    assert.equal((await admin('POST', '/bad%20tenant/apps/geo/enable')).status, 400);
  });

  it('leaves out a tool whose provider fails its health probe, and offers it again once the probe passes', async () => {
    const jack = await newUser('initech');
    stack.tools.on('health', () => ({ status: 503, body: { ok: false } }));
    try {
      const down = await stack.api.request('GET', '/api/v1/apps/geo', { key: jack });
      assert.deepEqual(
        down.body.tools.map((t: { reason?: string; provider?: string }) => [t.reason, t.provider]),
        [['unhealthy', 'nominatim']],
      );
      const { mission } = await runWith(jack, 'geo-down', ['geo.geocode'], []);
      assert.deepEqual(mission.unavailableTools, [{ tool: 'geo.geocode', reason: 'unhealthy', provider: 'nominatim' }]);
    } finally {
      stack.tools.on('health', () => ({ body: { ok: true } }));
    }
    const up = await stack.api.request('GET', '/api/v1/apps/geo', { key: jack });
    assert.equal(up.body.tools[0].available, true);
    const { mission } = await runWith(jack, 'geo-up', ['geo.geocode'], [{ name: 'geo__geocode', input: { place: 'Lisbon' } }]);
    assert.equal(mission.tools[0]?.status, 'completed');
  });

  it('turns a call to a tool that became unavailable after the catalog froze into an error result, not a crash', async () => {
    const kim = await newUser('stark');
    await stack.api.request('PUT', '/api/v1/secrets/tavily', { key: kim, body: { value: secret('soon-deleted') } });
    assert.equal((await admin('POST', '/stark/apps/premium/enable')).status, 200);
    await stack.api.createSkill(kim, skillMd({ name: 'fragile', tools: ['search.deep_search', 'premium.quote'], maxTurns: 3 }));
    // Between prepare (catalog frozen) and the first tool call: the key is deleted and the app disabled.
    stack.model.setHandler(async (req) => {
      if (req.toolResults.length > 0) return { reply: { text: 'I could not use those tools.' } };
      await stack.api.request('DELETE', '/api/v1/secrets/tavily', { key: kim });
      await admin('POST', '/stark/apps/premium/disable');
      return {
        reply: {
          toolUses: [
            { id: 'tu_deep', name: 'search__deep_search', input: { q: 'x' } },
            { id: 'tu_quote', name: 'premium__quote', input: { ticker: 'X' } },
          ],
        },
      };
    });
    try {
      const first = stack.model.requests.length;
      const { id } = await stack.api.startMission(kim, { skill: 'fragile', objective: 'Try the tools.' });
      const mission = await stack.api.waitForEnd(kim, id);
      assert.equal(mission.status, 'completed');
      assert.deepEqual(
        mission.tools.map((t: { status: string }) => t.status),
        ['error', 'error'],
      );
      const results = stack.model.requests.slice(first).at(-1)!.toolResults;
      assert.deepEqual(
        results.map((r) => r.isError),
        [true, true],
      );
      assert.match(results[0]!.content, /tool became unavailable: search\.deep_search: no API key for provider tavily/);
      assert.match(results[1]!.content, /tool became unavailable: premium\.quote: its app premium was disabled/);
    } finally {
      stack.model.setHandler(undefined);
    }
  });

  it('preselects the tools most relevant to the objective when a catalog is over MAX_TOOLS_PER_MISSION, and records it', async () => {
    const leo = await newUser('initech');
    await stack.api.createSkill(leo, skillMd({ name: 'utility', tools: ['toolbox.*'], maxTurns: 2 }));
    const first = stack.model.requests.length;
    const { id } = await stack.api.startMission(leo, {
      skill: 'utility',
      objective: 'Convert 120 US dollars to euros at the current exchange rate',
    });
    const mission = await stack.api.waitForEnd(leo, id);
    assert.equal(mission.status, 'completed');
    const offered = stack.model.requests[first]!.toolNames.filter((n) => n.includes('__'));
    assert.equal(offered.length, 3, 'MAX_TOOLS_PER_MISSION app tools, plus the system tools');
    assert.ok(offered.includes('toolbox__convert_currency'), offered.join(', '));
    assert.ok(stack.model.requests[first]!.toolNames.includes('save_memory'), 'system tools are always offered');
    assert.equal(mission.preselection.limit, 3);
    assert.equal(mission.preselection.candidates, 6);
    assert.equal(mission.preselection.kept[0].qualifiedName, 'toolbox.convert_currency');
    assert.equal(mission.preselection.dropped.length, 3);
  });
});
