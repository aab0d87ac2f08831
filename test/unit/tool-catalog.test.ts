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
