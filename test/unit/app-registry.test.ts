import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadAppRegistry } from '../../tools/app-registry.ts';

const roots: string[] = [];
after(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));

/** Writes `{folder: app.yml text}` into a fresh apps directory. */
async function appsDir(apps: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cadenza-apps-'));
  roots.push(root);
  for (const [folder, yml] of Object.entries(apps)) {
    await mkdir(join(root, folder));
    await writeFile(join(root, folder, 'app.yml'), yml);
  }
  return root;
}

function appYml(id: string, tools = tool('get_forecast')): string {
  return `id: ${id}\nname: ${id}\ndescription: Test app.\ntools:\n${tools}`;
}

function tool(name: string, inputSchema = '{type: object, properties: {place: {type: string}}, required: [place]}') {
  return `  - name: ${name}\n    description: A tool.\n    input_schema: ${inputSchema}\n    http: {url: "http://127.0.0.1:9000/${name}"}\n`;
}

/** A tool the mission's caller runs: no URL; `extra` lines (output_schema, timeout_s) go before `runs`. */
function clientTool(name: string, extra = '') {
  return `  - name: ${name}\n    description: A tool.\n    input_schema: {type: object}\n${extra}    runs: client\n`;
}

function recordingLogger() {
  const warnings: Array<{ msg: string; fields?: object }> = [];
  const errors: Array<{ msg: string; fields?: object }> = [];
  return {
    warnings,
    errors,
    warn: (msg: string, fields?: object) => void warnings.push({ msg, fields }),
    error: (msg: string, fields?: object) => void errors.push({ msg, fields }),
  };
}

async function loadOne(folder: string, yml: string) {
  const logger = recordingLogger();
  const registry = await loadAppRegistry(await appsDir({ [folder]: yml }), { logger });
  return { registry, logger };
}

describe('loadAppRegistry', () => {
  it('loads a valid app with defaults and qualified tool names', async () => {
    const { registry } = await loadOne('weather', appYml('weather'));
    assert.deepEqual(registry.errors, []);
    assert.deepEqual(
      registry.apps.map((a) => a.id),
      ['weather'],
    );
    const forecast = registry.getTool('weather.get_forecast');
    assert.ok(forecast);
    assert.equal(forecast.appId, 'weather');
    assert.equal(forecast.timeoutS, 30);
    assert.equal(forecast.retries, 2);
    assert.deepEqual(forecast.http, { url: 'http://127.0.0.1:9000/get_forecast', method: 'POST', headers: {} });
    assert.equal(forecast.validateInput({ place: 'Lisbon' }), true);
    assert.equal(forecast.validateInput({}), false);
    assert.deepEqual(
      registry.listTools().map((t) => t.qualifiedName),
      ['weather.get_forecast'],
    );
    assert.equal(registry.getTool('weather.nope'), undefined);
  });

  it('returns an empty registry when the apps directory does not exist', async () => {
    const registry = await loadAppRegistry(join(tmpdir(), 'cadenza-no-such-apps-dir'), {});
    assert.deepEqual(registry.apps, []);
    assert.deepEqual(registry.errors, []);
  });

  it('skips and warns about a broken app while the good one loads', async () => {
    const logger = recordingLogger();
    const dir = await appsDir({ good: appYml('good'), broken: 'id: broken\nname: [unclosed\n' });
    const registry = await loadAppRegistry(dir, { logger });
    assert.deepEqual(
      registry.apps.map((a) => a.id),
      ['good'],
    );
    assert.ok(registry.getTool('good.get_forecast'));
    assert.equal(registry.errors.length, 1);
    assert.equal(registry.errors[0]?.appDir, join(dir, 'broken'));
    assert.match(registry.errors[0]?.message ?? '', /not valid YAML/);
    assert.equal(logger.warnings.length, 1);
    assert.deepEqual(logger.warnings[0]?.fields, { appDir: join(dir, 'broken'), error: registry.errors[0]?.message });
  });

  const appRejected: Array<[string, string, string, RegExp]> = [
    [
      'a folder name that differs from the id',
      'forecasts',
      appYml('weather'),
      /app id 'weather' does not match its folder name 'forecasts'/,
    ],
    ['an unknown field', 'weather', appYml('weather').replace('description: Test app.', 'descripton: Test app.'), /descripton/],
    ['no tools', 'weather', 'id: weather\nname: W\ndescription: D.\ntools: []\n', /tools: must declare at least one tool/],
    ['a provider of the wrong shape', 'weather', appYml('weather').replace('tools:', 'providers: [{nam: X}]\ntools:'), /providers\[0\]/],
    [
      'the same provider twice',
      'weather',
      appYml('weather').replace('tools:', 'providers: [Brave, brave]\ntools:'),
      /duplicate provider 'brave'/,
    ],
  ];
  for (const [what, folder, yml, expected] of appRejected) {
    it(`skips an app with ${what}, naming the problem`, async () => {
      const { registry, logger } = await loadOne(folder, yml);
      assert.deepEqual(registry.apps, []);
      assert.match(registry.errors[0]?.message ?? '', expected);
      assert.equal(logger.warnings.length, 1);
    });
  }

  const toolBroken: Array<[string, string, RegExp]> = [
    ['a bad tool name', tool('Get-Forecast'), /^name: must be 1-48/],
    ['an input schema that is not type object', tool('t', '{type: array}'), /input_schema: must be a JSON Schema with type: object/],
    ['an invalid JSON Schema', tool('t', '{type: object, properties: {p: {type: strin}}}'), /input_schema: invalid JSON Schema/],
    [
      'a pattern RE2 cannot run (a lookahead)',
      tool('t', "{type: object, properties: {p: {type: string, pattern: '(?=a)b'}}}"),
      /input_schema: invalid JSON Schema: pattern "\(\?=a\)b" is not supported/,
    ],
    ['a misspelt schema keyword', tool('t', '{type: object, requried: [p]}'), /unknown keyword: "requried"/],
    ['a non-http URL', tool('t').replace('http://127.0.0.1:9000/', 'ftp://host/'), /http\.url/],
    ['a malformed placeholder', tool('t').replace('http://127.0.0.1:9000', '${base-url}'), /malformed placeholder \$\{base-url\}/],
    ['a timeout over 600 s', tool('t').replace('    http:', '    timeout_s: 601\n    http:'), /timeout_s/],
    [
      'an unknown executor',
      '  - name: t\n    description: A tool.\n    input_schema: {type: object}\n    grpc: {host: x}\n',
      /unknown field or executor 'grpc'.*no executor/,
    ],
    [
      'a key placeholder naming no provider of the app',
      tool('t').replace('"}', '", headers: {Authorization: "Bearer ${provider.brave}"}}'),
      /\$\{provider\.brave\} names no provider/,
    ],
    ['the same name as a tool before it', tool('get_forecast'), /duplicate tool name 'get_forecast'/],
    ['both executors', tool('t').replace('    http:', '    runs: client\n    http:'), /two executors/],
    [
      'an output_schema on an HTTP tool',
      tool('t').replace('    http:', '    output_schema: {type: object}\n    http:'),
      /output_schema is for tools with runs: client/,
    ],
    ['an unknown runs value', clientTool('t').replace('runs: client', 'runs: server'), /runs: must be 'client'/],
    [
      'an invalid output_schema',
      clientTool('t', '    output_schema: {type: object, requried: [x]}\n'),
      /output_schema: invalid JSON Schema/,
    ],
    ['a client deadline over a day', clientTool('t', '    timeout_s: 86401\n'), /timeout_s: .*86400/],
  ];
  for (const [what, broken, expected] of toolBroken) {
    it(`skips alone a tool with ${what}, logging the app, the tool and the reason; its siblings load`, async () => {
      const { registry, logger } = await loadOne('weather', appYml('weather', tool('get_forecast') + broken + tool('get_alerts')));
      assert.deepEqual(registry.errors, []);
      assert.deepEqual(
        registry.listTools().map((t) => t.name),
        ['get_forecast', 'get_alerts'],
      );
      const skipped = registry.apps[0]?.skipped ?? [];
      assert.equal(skipped.length, 1);
      assert.match(skipped[0]?.error ?? '', expected);
      if (skipped[0]?.name !== 'get_forecast') {
        // A duplicate's name is its first twin's, which loaded; any other skipped tool is unknown, with its error kept.
        assert.equal(registry.getTool(skipped[0]!.qualifiedName), undefined);
        assert.equal(registry.loadError(skipped[0]!.qualifiedName), skipped[0]?.error);
      }
      assert.equal(logger.errors.length, 1);
      assert.equal(logger.errors[0]?.msg, 'tool skipped: its declaration is invalid');
      assert.deepEqual(logger.errors[0]?.fields, { app: 'weather', tool: skipped[0]?.name, reason: skipped[0]?.error });
    });
  }

  it('loads a runs: client tool with no URL: a longer default deadline and its output schema compiled', async () => {
    const yml = appYml('desk', clientTool('ask') + clientTool('pick', '    output_schema: {type: object, required: [color]}\n'));
    const { registry } = await loadOne('desk', yml);
    assert.deepEqual(registry.errors, []);
    const ask = registry.getTool('desk.ask')!;
    assert.deepEqual([ask.http, ask.client, ask.timeoutS], [undefined, {}, 300]);
    const validate = registry.getTool('desk.pick')!.client!.validateOutput!;
    assert.deepEqual([validate({ color: 'red' }), validate({})], [true, false]);
    assert.equal(registry.getTool('desk.pick')!.timeoutS, 300);
  });

  it('reads providers in the short and the long form as one type, and default_enabled', async () => {
    const yml = appYml('search', tool('web') + tool('news').replace('    http:', '    providers: [Brave]\n    http:')).replace(
      'tools:',
      'default_enabled: false\nproviders:\n  - Brave\n  - {name: Open Meteo, no_api_key: true, health: {url: "http://127.0.0.1:1/health", interval_s: 5}}\ntools:',
    );
    const { registry } = await loadOne('search', yml);
    const app = registry.getApp('search');
    assert.equal(app?.defaultEnabled, false);
    assert.deepEqual(app?.providers, [
      { name: 'Brave', id: 'brave', noApiKey: false },
      { name: 'Open Meteo', id: 'open_meteo', noApiKey: true, health: { url: 'http://127.0.0.1:1/health', intervalS: 5, timeoutS: 5 } },
    ]);
    assert.deepEqual(
      registry.getTool('search.web')?.providers.map((p) => p.id),
      ['brave', 'open_meteo'],
      'all of the app by default',
    );
    assert.deepEqual(
      registry.getTool('search.news')?.providers.map((p) => p.id),
      ['brave'],
      'a tool may name fewer',
    );
    assert.equal((await loadOne('x', appYml('x'))).registry.getApp('x')?.defaultEnabled, true);
  });

  it('reports a folder without app.yml and ignores plain files beside the apps', async () => {
    const dir = await appsDir({ good: appYml('good') });
    await mkdir(join(dir, 'empty'));
    await writeFile(join(dir, 'README.md'), '# apps\n');
    const registry = await loadAppRegistry(dir, {});
    assert.deepEqual(
      registry.apps.map((a) => a.id),
      ['good'],
    );
    assert.deepEqual(registry.errors, [{ appDir: join(dir, 'empty'), appId: 'empty', message: 'no app.yml in this folder' }]);
  });

  it('loads the weather app shipped in apps/', async () => {
    const registry = await loadAppRegistry(join(import.meta.dirname, '../../apps'), {});
    const names = registry.listTools().map((t) => t.qualifiedName);
    assert.ok(names.includes('weather.get_forecast') && names.includes('weather.get_alerts'), names.join(', '));
    assert.equal(registry.getTool('weather.get_forecast')?.http?.url, '${WEATHER_TOOLS_URL}/forecast');
  });
});
