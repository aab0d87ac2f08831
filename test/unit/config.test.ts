import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_KEYS, ConfigError, loadConfig } from '../../config/config.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const exampleLines = readFileSync(join(ROOT, '.env.example'), 'utf8').split('\n');
const exampleEntries = exampleLines.flatMap((line, i) => {
  const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
  return m ? [{ key: m[1]!, value: m[2]!, comment: exampleLines[i - 1] ?? '' }] : [];
});

test('.env.example lists every configuration key once, and nothing else', () => {
  const keys = exampleEntries.map((e) => e.key);
  assert.deepEqual([...keys].sort(), [...CONFIG_KEYS].sort());
  assert.equal(new Set(keys).size, keys.length, 'a key is listed twice');
});

test('every key in .env.example has a one-line comment above it', () => {
  for (const { key, comment } of exampleEntries) assert.match(comment, /^# \S/, `${key} has no comment`);
});

test('the values written in .env.example are the real defaults', () => {
  const exampleEnv = Object.fromEntries(exampleEntries.map((e) => [e.key, e.value]));
  assert.deepEqual(loadConfig(exampleEnv), loadConfig({}));
});

test('an empty environment gives the documented defaults', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.temporal.taskQueue, 'skill-missions');
  assert.equal(config.temporal.modelTaskQueue, 'skill-missions-model');
  assert.equal(config.temporal.namespace, 'default');
  assert.equal(config.model.concurrency, 2);
  assert.equal(config.model.provider, 'anthropic');
  assert.match(config.model.tiers.allegro, /^\S+$/);
  assert.equal(config.databaseUrl, undefined, 'no DATABASE_URL means embedded PGlite');
  assert.equal(config.temporal.address, undefined, 'no TEMPORAL_ADDRESS means a dev server');
});

test('tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT; with it, traces go to its /v1/traces', () => {
  assert.equal(loadConfig({}).telemetry.tracing, undefined);
  assert.deepEqual(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'cadenza-eu' }).telemetry.tracing,
    {
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'cadenza-eu',
    },
  );
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base' }).telemetry.tracing?.serviceName, 'cadenza');
  assert.throws(
    () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
    /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/,
  );
});

test('a tier variable overrides the model id of that tier only', () => {
  const base = loadConfig({});
  const config = loadConfig({ MODEL_TIER_ALLEGRO: 'my-model' });
  assert.equal(config.model.tiers.allegro, 'my-model');
  assert.equal(config.model.tiers.forte, base.model.tiers.forte);
  assert.notEqual(loadConfig({ MODEL_PROVIDER: 'openai' }).model.tiers.allegro, base.model.tiers.allegro);
});

test('an invalid value fails with a ConfigError naming the variable', () => {
  const cases: Record<string, string> = {
    PORT: 'abc',
    MODEL_PROVIDER: 'foo',
    MODEL_CONCURRENCY: '0',
    DATABASE_URL: 'mysql://x',
    CADENZA_ADMIN_KEY: 'short',
    MODEL_PRICES: '{"m": {"inputPerMTok": -1, "outputPerMTok": 1}}',
    DEFAULT_MAX_TOKENS: '0',
    DEFAULT_MAX_COST_USD: 'ten',
    EMBEDDINGS_BASE_URL: 'not a url',
    WORKER_QUEUES: 'missions,workflows',
  };
  for (const [name, value] of Object.entries(cases)) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && new RegExp(`\\b${name}\\b`).test(err.message),
      `${name}=${value}`,
    );
  }
});

test('a worker process serves the task queues WORKER_QUEUES names, all three by default', () => {
  assert.deepEqual(loadConfig({}).workerQueues, ['missions', 'model', 'tools']);
  assert.deepEqual(loadConfig({ WORKER_QUEUES: ' tools ' }).workerQueues, ['tools']);
  assert.throws(() => loadConfig({ WORKER_QUEUES: '' }), /WORKER_QUEUES/);
});

test('every invalid variable is named at once', () => {
  assert.throws(
    () => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' }),
    (err: unknown) => err instanceof ConfigError && /\bPORT\b/.test(err.message) && /\bLOG_LEVEL\b/.test(err.message),
  );
});

test('the returned configuration is frozen, nested objects too', () => {
  const config = loadConfig({});
  assert.throws(() => {
    (config as { port: number }).port = 1;
  }, TypeError);
  assert.throws(() => {
    (config.temporal as { taskQueue: string }).taskQueue = 'other';
  }, TypeError);
  assert.throws(() => {
    (config.model.tiers as { allegro: string }).allegro = 'other';
  }, TypeError);
  assert.equal(config.port, 8080);
});

test('MODEL_PRICES maps model ids to prices per million tokens; the budgets default to none', () => {
  const config = loadConfig({ MODEL_PRICES: '{"claude-x": {"inputPerMTok": 3, "outputPerMTok": 15}}', DEFAULT_MAX_COST_USD: '2.5' });
  assert.deepEqual(config.model.prices, { 'claude-x': { inputPerMTok: 3, outputPerMTok: 15 } });
  assert.deepEqual(config.budgets, { maxTokens: undefined, maxCostUsd: 2.5, pauseTimeoutS: 604_800 });
  assert.deepEqual(loadConfig({}).model.prices, {});
  assert.equal(loadConfig({}).embeddings, undefined, 'no endpoint: keyword and trigram retrieval only');
  assert.throws(() => loadConfig({ MODEL_PRICES: 'not json' }), /MODEL_PRICES/);
});

test('SECRETS_MASTER_KEY takes comma-separated 32-byte keys and names a bad one without quoting it', () => {
  const hex = 'ab'.repeat(32);
  const b64 = Buffer.alloc(32, 7).toString('base64');
  assert.deepEqual(loadConfig({ SECRETS_MASTER_KEY: `${hex}, ${b64}` }).secrets.masterKeys, [hex, b64]);
  assert.deepEqual(loadConfig({}).secrets.masterKeys, []);
  assert.throws(
    () => loadConfig({ SECRETS_MASTER_KEY: `${hex},too-short-secret` }),
    (err: Error) =>
      err instanceof ConfigError &&
      /SECRETS_MASTER_KEY: entry 2 is not a 32-byte key/.test(err.message) &&
      !err.message.includes('too-short-secret'),
  );
});

test('PROVIDER_KEY_<ID> variables become server-wide provider keys by provider id', () => {
  const config = loadConfig({ PROVIDER_KEY_BRAVE: 'k1', PROVIDER_KEY_OPEN_METEO: ' k2 ', PROVIDER_KEY_EMPTY: '', PROVIDER_KEYS: 'x' });
  assert.deepEqual(config.secrets.providerKeys, { brave: 'k1', open_meteo: 'k2' });
  assert.equal(loadConfig({}).maxToolsPerMission, 24);
  assert.equal(loadConfig({ MAX_TOOLS_PER_MISSION: '5' }).maxToolsPerMission, 5);
});

test('SECRETS_BACKEND=vault needs VAULT_ADDR and VAULT_TOKEN', () => {
  assert.equal(loadConfig({}).secrets.backend, 'postgres');
  assert.throws(
    () => loadConfig({ SECRETS_BACKEND: 'vault' }),
    (err: Error) => err instanceof ConfigError && /VAULT_ADDR, VAULT_TOKEN/.test(err.message),
  );
  const vault = loadConfig({ SECRETS_BACKEND: 'vault', VAULT_ADDR: 'http://127.0.0.1:8200', VAULT_TOKEN: 't' }).secrets.vault;
  assert.deepEqual(vault, { address: 'http://127.0.0.1:8200', token: 't', mount: 'secret', prefix: 'cadenza' });
});

test('webhooks: WEBHOOK_RETRY_HOURS defaults to 24 (decimals allowed); WEBHOOK_ALLOW_PRIVATE_NETWORKS takes addresses and CIDR ranges only', () => {
  assert.deepEqual(loadConfig({}).webhooks, { retryHours: 24, allowPrivateNetworks: [] });
  const config = loadConfig({ WEBHOOK_RETRY_HOURS: '0.5', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1, 10.0.0.0/8,::1' });
  assert.deepEqual(config.webhooks, { retryHours: 0.5, allowPrivateNetworks: ['127.0.0.1', '10.0.0.0/8', '::1'] });
  for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/1', '1.2.3'])
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: bad }), /WEBHOOK_ALLOW_PRIVATE_NETWORKS/, bad);
  assert.throws(() => loadConfig({ WEBHOOK_RETRY_HOURS: '0' }), /WEBHOOK_RETRY_HOURS/);
});
