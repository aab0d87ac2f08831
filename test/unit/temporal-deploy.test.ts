import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_NAMES } from '../../contracts/mission.ts';

// The compose file and scripts/temporal-cluster.sh describe one Temporal cluster: both must run the files of
// deploy/temporal/ (no Docker engine here: compose is read the way Compose would read it).
type Service = { image?: string; entrypoint?: string[]; volumes?: string[] };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy/temporal');
const services = (parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> })
  .services;
const script = readFileSync(join(ROOT, 'scripts/temporal-cluster.sh'), 'utf8');
const versions = Object.fromEntries(
  [...readFileSync(join(DEPLOY, 'versions.env'), 'utf8').matchAll(/^(\w+)=v?(\S+)$/gm)].map((m) => [m[1]!, m[2]!]),
);
/** What a compose service runs from deploy/temporal/, as a path in the repository. */
function deployFile(name: string): string {
  const s = services[name] ?? assert.fail(`no service ${name}`);
  assert.ok(s.volumes?.includes('./deploy/temporal:/deploy/temporal:ro'), `${name} mounts deploy/temporal`);
  const [program, file, ...args] = s.entrypoint ?? [];
  assert.equal(program, 'sh', name);
  assert.match(file ?? '', /^\/deploy\/temporal\//, name);
  return [file!.slice(1), ...args].join(' ');
}

test('the compose services and the cluster script run the same setup steps and service launcher', () => {
  assert.equal(deployFile('temporal-schema'), 'deploy/temporal/setup.sh schema');
  assert.equal(deployFile('temporal-setup'), 'deploy/temporal/setup.sh namespace');
  const launched = ['temporal-history', 'temporal-matching', 'temporal', 'temporal-worker'].map(deployFile);
  assert.deepEqual(
    launched,
    ['history', 'matching', 'frontend', 'worker'].map((s) => `deploy/temporal/start-service.sh ${s}`),
  );
  assert.match(script, /"\$TEMPORAL_DEPLOY_DIR\/setup\.sh" schema/);
  assert.match(script, /"\$TEMPORAL_DEPLOY_DIR\/setup\.sh" namespace/);
  assert.match(script, /"\$TEMPORAL_DEPLOY_DIR\/start-service\.sh" "\$service"/);
  assert.match(script, /"\$TEMPORAL_DEPLOY_DIR\/server-config\.sh"/);
  assert.match(readFileSync(join(DEPLOY, 'start-service.sh'), 'utf8'), /server-config\.sh/);
  for (const file of ['setup.sh', 'start-service.sh', 'server-config.sh', 'ui-config.sh', 'make-certs.sh', 'search-attributes.txt'])
    assert.ok(existsSync(join(DEPLOY, file)), file);
});

test('the images are the versions the cluster script builds', () => {
  assert.ok(versions.TEMPORAL_SERVER_VERSION && versions.TEMPORAL_UI_VERSION);
  assert.match(script, /source "\$TEMPORAL_DEPLOY_DIR\/versions\.env"/);
  for (const name of ['temporal', 'temporal-history', 'temporal-matching', 'temporal-worker'])
    assert.equal(services[name]?.image, `temporalio/server:${versions.TEMPORAL_SERVER_VERSION}`, name);
  for (const name of ['temporal-schema', 'temporal-setup'])
    assert.match(services[name]?.image ?? '', new RegExp(`^temporalio/admin-tools:${versions.TEMPORAL_SERVER_VERSION}-`), name);
  assert.equal(services['temporal-ui']?.image, `temporalio/ui:${versions.TEMPORAL_UI_VERSION}`);
});

test('the search attributes registered are exactly those the workflows set, all Keyword', () => {
  const pairs = readFileSync(join(DEPLOY, 'search-attributes.txt'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split('='));
  assert.deepEqual(pairs.map(([name]) => name).sort(), [...SEARCH_ATTRIBUTE_NAMES].sort());
  for (const [name, type] of pairs) assert.equal(type, 'Keyword', name);
});

test('the server config is valid YAML for both shapes, with the frontend TLS only when asked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-deploy-'));
  try {
    const write = (env: Record<string, string>) => {
      const base = {
        PATH: process.env.PATH ?? '',
        DB_HOST: 'postgres',
        DB_PORT: '5432',
        DB_USER: 'cadenza',
        BROADCAST_ADDRESS: '10.0.0.5',
      };
      execFileSync('sh', [join(DEPLOY, 'server-config.sh'), dir], { env: { ...base, ...env } });
      return parse(readFileSync(join(dir, 'config/development.yaml'), 'utf8')) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const compose = write({ FRONTEND_ADDRESS: 'temporal:7233' });
    assert.equal(compose.services.frontend.rpc.grpcPort, 7233);
    assert.equal(compose.services.frontend.rpc.bindOnIP, '0.0.0.0');
    assert.equal(compose.clusterMetadata.clusterInformation.active.rpcAddress, 'temporal:7233');
    assert.equal(compose.global.membership.broadcastAddress, '10.0.0.5');
    assert.equal(compose.global.tls, undefined);
    assert.equal(compose.persistence.datastores['postgres-visibility'].sql.databaseName, 'temporal_visibility');
    const local = write({ PORT_BASE: '21000', BIND_IP: '127.0.0.1', TLS_DIR: '/certs' });
    assert.equal(local.services.worker.rpc.grpcPort, 21007);
    assert.equal(local.clusterMetadata.clusterInformation.active.rpcAddress, '10.0.0.5:21000');
    assert.equal(local.global.tls.frontend.server.certFile, '/certs/server.pem');
    assert.deepEqual(local.global.tls.systemWorker.client.rootCaFiles, ['/certs/ca.pem']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
