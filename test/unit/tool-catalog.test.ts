import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assembleCatalog, toCatalogEntries } from '../../activities/tool-catalog.ts';
import type { AvailabilityFacts } from '../../tools/availability.ts';
import { createAppRegistry, type AppDefinition } from '../../tools/app-registry.ts';
import { createInputSchemaCompiler } from '../../tools/app-schema.ts';
import { saveMemoryTool, searchMemoryTool } from '../../tools/system/memory-tools.ts';
import { createSystemToolRegistry } from '../../tools/system/system-tool.ts';
import { unknownTools } from '../../tools/unknown-tools.ts';

const compile = createInputSchemaCompiler();
function app(id: string, tools: string[], requiresAccount?: string): AppDefinition {
  return {
    id,
    name: id,
    description: id,
    providers: [],
    defaultEnabled: true,
    skipped: [],
    ...(requiresAccount ? { requiresAccount } : {}),
    tools: tools.map((name) => ({
      providers: [],
      qualifiedName: `${id}.${name}`,
      appId: id,
      name,
      description: name,
      inputSchema: { type: 'object' },
      timeoutS: 10,
      retries: 1,
      approval: false,
      ...(requiresAccount ? { requiresAccount } : {}),
      http: { url: 'http://127.0.0.1:1', method: 'POST' as const, headers: {} },
      validateInput: compile({ type: 'object' }),
    })),
  };
}
const registry = createAppRegistry([app('weather', ['forecast']), app('mail', ['search'], 'google')]);
const systemTools = createSystemToolRegistry([saveMemoryTool, searchMemoryTool]);
const facts = (accounts: string[] = []): AvailabilityFacts => ({
  switches: new Map(),
  keys: new Map(),
  accounts: new Set(accounts),
  unhealthy: new Set(),
});
/** The model-facing names a mission would be offered. */
const offered = (o: { allowedTools: string[]; accounts?: string[] }) => {
  const { tools, omitted } = assembleCatalog({ registry, systemTools, allowedTools: o.allowedTools, facts: facts(o.accounts) });
  return { catalog: toCatalogEntries(tools, systemTools), omitted };
};

describe('the connection gate', () => {
  const names = (active: string[]) => offered({ allowedTools: ['weather.forecast', 'mail.search', 'ghost.tool'], accounts: active });

  it('leaves out a tool whose account is not connected, and says why', () => {
    const { catalog, omitted } = names([]);
    assert.deepEqual(
      catalog.map((c) => c.name),
      ['weather__forecast', 'save_memory', 'search_memory'],
    );
    assert.deepEqual(omitted, [
      { tool: 'mail.search', reason: 'not_connected', provider: 'google' },
      { tool: 'ghost.tool', reason: 'not_installed' },
    ]);
  });

  it('offers it once the provider is active', () => {
    assert.deepEqual(
      names(['google']).catalog.map((c) => c.qualifiedName),
      ['weather.forecast', 'mail.search', 'system.save_memory', 'system.search_memory'],
    );
  });

  it('offers the system tools once even when the skill names them', () => {
    const { catalog } = offered({ allowedTools: ['system.save_memory'] });
    assert.deepEqual(
      catalog.map((c) => c.name),
      ['save_memory', 'search_memory'],
    );
  });
});

describe('unknown tools at authoring time', () => {
  it('names the entries that are neither installed nor system tools; an unconnected one is known', () => {
    const system = ['save_memory', 'search_memory'];
    assert.deepEqual(
      unknownTools(registry, ['weather.forecast', 'mail.search', 'system.save_memory', 'ghost.tool', 'system.nope'], system),
      ['ghost.tool', 'system.nope'],
    );
    assert.deepEqual(unknownTools(registry, []), []);
  });
});

describe('a tool named twice in allowed-tools', () => {
  it('is offered once: providers refuse a request whose tool names repeat', () => {
    // Strict authoring accepts `allowed-tools: weather.forecast weather.forecast` and stores the frontmatter as written.
    const { catalog } = offered({ allowedTools: ['weather.forecast', 'weather.forecast'] });
    assert.deepEqual(
      catalog.map((c) => c.name),
      ['weather__forecast', 'save_memory', 'search_memory'],
    );
  });
});

describe('availability and whole apps', () => {
  const keyed = app('search', ['web', 'news']);
  const brave = { name: 'Brave', id: 'brave', noApiKey: false };
  const searchApp: AppDefinition = { ...keyed, providers: [brave], tools: keyed.tools.map((t) => ({ ...t, providers: [brave] })) };
  const shipsOff: AppDefinition = { ...app('premium', ['quote']), defaultEnabled: false };
  const reg = createAppRegistry([searchApp, shipsOff, app('mail', ['search'], 'google')]);
  const base: AvailabilityFacts = { switches: new Map(), keys: new Map(), accounts: new Set(), unhealthy: new Set() };
  const run = (allowedTools: string[], facts: Partial<AvailabilityFacts> = {}) =>
    assembleCatalog({ registry: reg, systemTools, allowedTools, facts: { ...base, ...facts } });

  it('expands <app-id>.* to every loaded tool of the app, once, and names an unknown app not_installed', () => {
    const { tools, omitted } = run(['search.web', 'search.*', 'ghost.*'], { keys: new Map([['brave', 'user']]) });
    assert.deepEqual(
      tools.map((t) => t.qualifiedName),
      ['search.web', 'search.news'],
    );
    assert.deepEqual(omitted, [{ tool: 'ghost.*', reason: 'not_installed' }]);
  });

  it('checks in the order an admin would fix things: disabled, no_key, not_connected, unhealthy', () => {
    assert.deepEqual(run(['search.web']).omitted, [{ tool: 'search.web', reason: 'no_key', provider: 'brave' }]);
    assert.deepEqual(run(['search.web'], { switches: new Map([['search', false]]) }).omitted, [{ tool: 'search.web', reason: 'disabled' }]);
    assert.deepEqual(run(['premium.quote']).omitted, [{ tool: 'premium.quote', reason: 'disabled' }], 'default_enabled: false');
    assert.deepEqual(run(['premium.quote'], { switches: new Map([['premium', true]]) }).omitted, [], 'until an admin enables it');
    assert.deepEqual(run(['search.web'], { keys: new Map([['brave', 'server']]), unhealthy: new Set(['brave']) }).omitted, [
      { tool: 'search.web', reason: 'unhealthy', provider: 'brave' },
    ]);
    assert.deepEqual(run(['mail.search']).omitted, [{ tool: 'mail.search', reason: 'not_connected', provider: 'google' }]);
  });

  it('accepts a whole installed app at authoring time and refuses an unknown one', () => {
    assert.deepEqual(unknownTools(reg, ['search.*', 'ghost.*', 'search.nope']), ['ghost.*', 'search.nope']);
  });
});
