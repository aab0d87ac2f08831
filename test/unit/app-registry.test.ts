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

function recordingLogger() {
  const warnings: Array<{ msg: string; fields?: object }> = [];
  return { warnings, warn: (msg: string, fields?: object) => warnings.push({ msg, fields }) };
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

  const rejected: Array<[string, string, string, RegExp]> = [
    ['a bad tool name', 'weather', appYml('weather', tool('Get-Forecast')), /tools\[0\]\.name/],
    [
      'an input schema that is not type object',
      'weather',
      appYml('weather', tool('t', '{type: array}')),
      /tools\[0\]\.input_schema: must be a JSON Schema with type: object/,
    ],
    [
      'an invalid JSON Schema',
      'weather',
      appYml('weather', tool('t', '{type: object, properties: {p: {type: strin}}}')),
      /tools\[0\]\.input_schema: invalid JSON Schema/,
    ],
    ['a misspelt schema keyword', 'weather', appYml('weather', tool('t', '{type: object, requried: [p]}')), /unknown keyword: "requried"/],
    [
      'a folder name that differs from the id',
      'forecasts',
      appYml('weather'),
      /app id 'weather' does not match its folder name 'forecasts'/,
    ],
    ['duplicate tool names', 'weather', appYml('weather', tool('same') + tool('same')), /tools\[1\]\.name: duplicate tool name 'same'/],
    ['an unknown field', 'weather', appYml('weather').replace('description: Test app.', 'descripton: Test app.'), /descripton/],
    ['a non-http URL', 'weather', appYml('weather').replace('http://127.0.0.1:9000/', 'ftp://host/'), /tools\[0\]\.http\.url/],
    [
      'a malformed placeholder',
      'weather',
      appYml('weather').replace('http://127.0.0.1:9000', '${base-url}'),
      /malformed placeholder \$\{base-url\}/,
    ],
    ['a timeout over 600 s', 'weather', appYml('weather').replace('    http:', '    timeout_s: 601\n    http:'), /tools\[0\]\.timeout_s/],
    ['no tools', 'weather', 'id: weather\nname: W\ndescription: D.\ntools: []\n', /tools: must declare at least one tool/],
  ];
  for (const [what, folder, yml, expected] of rejected) {
    it(`skips an app with ${what}, naming the problem`, async () => {
      const { registry, logger } = await loadOne(folder, yml);
      assert.deepEqual(registry.apps, []);
      assert.match(registry.errors[0]?.message ?? '', expected);
      assert.equal(logger.warnings.length, 1);
    });
  }

  it('reports a folder without app.yml and ignores plain files beside the apps', async () => {
    const dir = await appsDir({ good: appYml('good') });
    await mkdir(join(dir, 'empty'));
    await writeFile(join(dir, 'README.md'), '# apps\n');
    const registry = await loadAppRegistry(dir, {});
    assert.deepEqual(
      registry.apps.map((a) => a.id),
      ['good'],
    );
    assert.deepEqual(registry.errors, [{ appDir: join(dir, 'empty'), message: 'no app.yml in this folder' }]);
  });

  it('loads the weather app shipped in apps/', async () => {
    const registry = await loadAppRegistry(join(import.meta.dirname, '../../apps'), {});
    const names = registry.listTools().map((t) => t.qualifiedName);
    assert.ok(names.includes('weather.get_forecast') && names.includes('weather.get_alerts'), names.join(', '));
    assert.equal(registry.getTool('weather.get_forecast')?.http.url, '${WEATHER_TOOLS_URL}/forecast');
  });
});
