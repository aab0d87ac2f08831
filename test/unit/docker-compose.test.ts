import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CONFIG_KEYS, loadConfig } from '../../config/config.ts';
import { EMBEDDED_NODE_FLAGS, WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../wiring/worker-process.ts';

// No Docker engine on the test machines: these checks read the files the way Compose and Docker would.
type Service = {
  image?: string;
  build?: unknown;
  command?: string | string[];
  ports?: string[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const service = (name: string): Service => services[name] ?? assert.fail(`no service ${name}`);
const env = (name: string) => service(name).environment ?? {};

/** Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}` interpolation over a given host environment. */
function interpolate(value: string | number, host: Record<string, string>): string {
  return String(value).replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    if (host[name]) return host[name];
    if (op === '?') assert.fail(`compose requires ${name} from the host: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

test('the stack has postgres, temporal as four services with its setup, the Web UI, the API and the worker', () => {
  for (const name of ['postgres', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'api', 'worker']) service(name);
  for (const name of ['temporal', 'temporal-history', 'temporal-matching', 'temporal-worker']) service(name);
  assert.equal(service('postgres').image, 'pgvector/pgvector:pg16');
  assert.match(service('temporal').image ?? '', /^temporalio\/server:/);
  assert.match(service('temporal-setup').image ?? '', /^temporalio\/admin-tools:/);
  assert.match(service('temporal-ui').image ?? '', /^temporalio\/ui:/);
});

test('the API, Temporal and the Web UI are published on 8080, 7233 and 8233', () => {
  assert.ok(service('api').ports?.includes('8080:8080'));
  assert.ok(service('temporal').ports?.includes('7233:7233'));
  assert.ok(service('temporal-ui').ports?.includes('8233:8080'));
  assert.equal(env('temporal-ui').TEMPORAL_ADDRESS, 'temporal:7233');
});

test('Temporal runs on the postgres service, once its schema is set up there', () => {
  for (const name of ['temporal-schema', 'temporal', 'temporal-history', 'temporal-matching', 'temporal-worker']) {
    const t = env(name);
    assert.equal(t.DB_HOST, 'postgres', name);
    assert.equal(t.FRONTEND_ADDRESS, 'temporal:7233', `${name} names the frontend as Cadenza reaches it`);
    for (const key of ['DB_PORT', 'DB_USER', 'DB_PASSWORD']) assert.ok(t[key], `${name} needs ${key}`);
  }
  assert.equal(service('temporal-schema').depends_on?.postgres?.condition, 'service_healthy');
  assert.equal(service('temporal-history').depends_on?.['temporal-schema']?.condition, 'service_completed_successfully');
  for (const name of ['temporal', 'temporal-matching', 'temporal-worker'])
    assert.equal(service(name).depends_on?.['temporal-history']?.condition, 'service_healthy', `${name} starts after history`);
});

test('the API and the worker start only once postgres and temporal are healthy and the setup has completed', () => {
  for (const name of ['api', 'worker']) {
    const deps = service(name).depends_on ?? {};
    assert.equal(deps.postgres?.condition, 'service_healthy', name);
    assert.equal(deps.temporal?.condition, 'service_healthy', name);
    assert.equal(deps['temporal-setup']?.condition, 'service_completed_successfully', name);
  }
});

test('the API and the worker are given only real configuration keys, and a valid configuration', () => {
  const host = { CADENZA_ADMIN_KEY: 'an-admin-key-of-32-characters-xx' };
  for (const name of ['api', 'worker']) {
    const e = env(name);
    const launch: string[] = name === 'worker' ? Object.keys(WORKER_PROCESS_ENV) : [];
    for (const key of Object.keys(e))
      assert.ok(CONFIG_KEYS.includes(key) || launch.includes(key), `${name}: ${key} is not a configuration key`);
    assert.ok(e.DATABASE_URL && e.TEMPORAL_ADDRESS, `${name} needs DATABASE_URL and TEMPORAL_ADDRESS`);
    const config = loadConfig(Object.fromEntries(Object.entries(e).map(([k, v]) => [k, interpolate(v, host)])));
    assert.equal(config.temporal.address, 'temporal:7233', name);
    assert.equal(new URL(config.databaseUrl ?? '').host, 'postgres:5432', name);
    assert.equal(config.adminKey, host.CADENZA_ADMIN_KEY, `${name} takes the admin key from the host`);
  }
  assert.ok('MODEL_CONCURRENCY' in env('worker'));
  assert.ok(['MODEL_PROVIDER', 'MODEL_BASE_URL', 'MODEL_API_KEY'].every((k) => String(env('worker')[k]).startsWith(`\${${k}`)));
});

test('postgres, temporal and the API have healthchecks; the API checks /readyz', () => {
  for (const name of ['postgres', 'temporal', 'api']) assert.ok(service(name).healthcheck?.test.length, `${name} has no healthcheck`);
  assert.match(service('postgres').healthcheck!.test.join(' '), /pg_isready/);
  assert.match(service('temporal').healthcheck!.test.join(' '), /temporal operator cluster health|tctl/);
  assert.match(service('api').healthcheck!.test.join(' '), /127\.0\.0\.1:8080\/readyz/);
});

test('the setup registers the namespace the API and the worker use, once the frontend is healthy', () => {
  assert.equal(env('temporal-setup').NAMESPACE, env('api').TEMPORAL_NAMESPACE);
  assert.equal(env('temporal-setup').TEMPORAL_ADDRESS, env('api').TEMPORAL_ADDRESS);
  assert.equal(service('temporal-setup').depends_on?.temporal?.condition, 'service_healthy');
});

test('the worker is given longer to stop than its activities are given to finish', () => {
  const grace = Number(interpolate(env('worker').SHUTDOWN_GRACE_SECONDS ?? '10', {}));
  const stop = /^(\d+)s$/.exec(service('worker').stop_grace_period ?? '');
  assert.ok(stop && Number(stop[1]) > grace, `stop_grace_period ${service('worker').stop_grace_period} <= ${grace}s`);
});

test('the commands of the image and of the API and worker services are files of the repository', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile);
  assert.ok(cmd, 'the Dockerfile has an exec-form CMD');
  const [program, file] = JSON.parse(cmd[1]!) as string[];
  assert.equal(program, 'node');
  assert.ok(existsSync(join(ROOT, file!)), `CMD runs ${file}, which does not exist`);
  assert.match(dockerfile, /^USER (?!root\b)\S+/m, 'the image runs as a non-root user');
  for (const name of ['api', 'worker']) {
    const script = [service(name).command ?? []].flat().at(-1);
    assert.ok(script && existsSync(join(ROOT, script)), `${name} runs ${script}, which does not exist`);
  }
});

test('the worker service and `npm run worker` launch the worker with its V8 heap sizes and malloc arenas', () => {
  assert.deepEqual(service('worker').command, ['node', ...WORKER_NODE_FLAGS, 'bin/worker.ts']);
  for (const [key, value] of Object.entries(WORKER_PROCESS_ENV)) assert.equal(String(env('worker')[key]), value, key);
  const npm = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.worker ?? '';
  const env0 = Object.entries(WORKER_PROCESS_ENV).map(([k, v]) => `${k}=${v}`);
  assert.equal(npm, `${env0.join(' ')} bash scripts/run.sh node ${WORKER_NODE_FLAGS.join(' ')} bin/worker.ts`);
});

test('scripts/start.sh launches the embedded default with the young generation and malloc arenas of a worker', () => {
  const launch = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('exec '));
  const env0 = Object.entries(WORKER_PROCESS_ENV).map(([k, v]) => `${k}=${v}`);
  assert.deepEqual(launch, [`exec env ${env0.join(' ')} node ${EMBEDDED_NODE_FLAGS.join(' ')} bin/cadenza.ts "$@"`]);
});
