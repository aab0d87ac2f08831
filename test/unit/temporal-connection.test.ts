import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { ServiceError } from '@temporalio/client';
import { temporalClientOptions, temporalConnectionOptions } from '../../temporal/connection.ts';
import { isTemporalUnavailable } from '../../temporal/unavailable.ts';

const dir = mkdtempSync(join(tmpdir(), 'cadenza-tls-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const CERT = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
const KEY = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
const CA = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

test('an address alone gives a plain connection to it', () => {
  const options = temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' }).temporal);
  assert.equal(options.address, 'temporal:7233');
  assert.ok(!options.tls, 'no TLS');
  assert.equal(options.apiKey, undefined);
});

test('TEMPORAL_API_KEY reaches the connection and turns TLS on (Temporal Cloud)', () => {
  const config = loadConfig({
    TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'my-ns.a1b2c',
    TEMPORAL_API_KEY: 'cloud-key-123',
  });
  assert.equal(config.temporal.namespace, 'my-ns.a1b2c');
  for (const options of [temporalConnectionOptions(config.temporal), temporalClientOptions(config.temporal)]) {
    assert.equal(options.apiKey, 'cloud-key-123');
    assert.equal(options.tls, true);
    assert.equal(options.address, 'my-ns.a1b2c.tmprl.cloud:7233');
  }
});

test('mTLS: the client certificate, its key, the CA and the server name reach the connection', () => {
  const config = loadConfig({
    TEMPORAL_ADDRESS: 'temporal.internal:7233',
    TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
    TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
    TEMPORAL_TLS_SERVER_NAME: 'temporal.example.org',
  });
  const tls = temporalConnectionOptions(config.temporal).tls;
  assert.ok(tls && typeof tls === 'object', 'a TLS configuration');
  assert.match(text(tls.clientCertPair?.crt) ?? '', /client/);
  assert.match(text(tls.clientCertPair?.key) ?? '', /PRIVATE KEY/);
  assert.match(text(tls.serverRootCACertificate) ?? '', /ca/);
  assert.equal(tls.serverNameOverride, 'temporal.example.org');
});

test('TEMPORAL_TLS=true alone gives TLS with the system roots', () => {
  const tls = temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_TLS: 'true' }).temporal).tls;
  assert.ok(tls, 'TLS on');
});

test('an envconfig profile file gives address, namespace, API key and TLS; TEMPORAL_* variables override it', () => {
  const toml = file(
    'temporal.toml',
    [
      '[profile.default]',
      'address = "localhost:7233"',
      '',
      '[profile.cloud]',
      'address = "prod.x1y2z.tmprl.cloud:7233"',
      'namespace = "prod.x1y2z"',
      'api_key = "profile-key-456"',
      '',
      '[profile.mtls]',
      'address = "secure.internal:7233"',
      '[profile.mtls.tls]',
      `client_cert_path = "${CERT}"`,
      `client_key_path = "${KEY}"`,
      '',
    ].join('\n'),
  );
  const cloud = loadConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud' });
  assert.equal(cloud.temporal.address, 'prod.x1y2z.tmprl.cloud:7233');
  assert.equal(cloud.temporal.namespace, 'prod.x1y2z');
  assert.equal(temporalConnectionOptions(cloud.temporal).apiKey, 'profile-key-456');
  assert.equal(temporalConnectionOptions(cloud.temporal).tls, true);

  const overridden = loadConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'staging.x1y2z' });
  assert.equal(overridden.temporal.namespace, 'staging.x1y2z');

  assert.equal(loadConfig({ TEMPORAL_CONFIG_FILE: toml }).temporal.address, 'localhost:7233', 'the default profile');
  const mtls = temporalConnectionOptions(loadConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'mtls' }).temporal).tls;
  assert.ok(mtls && typeof mtls === 'object');
  assert.match(text(mtls.clientCertPair?.crt) ?? '', /client/);
});

test('a broken Temporal configuration fails at start-up naming the variable', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ TEMPORAL_TLS_CLIENT_CERT_PATH: CERT }, /TEMPORAL_TLS_CLIENT_KEY_PATH/],
    [{ TEMPORAL_PROFILE: 'cloud' }, /TEMPORAL_PROFILE: needs TEMPORAL_CONFIG_FILE/],
    [{ TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') }, /TEMPORAL_CONFIG_FILE/],
    [{ TEMPORAL_CONFIG_FILE: file('bad.toml', '[profile.default\naddress = 1') }, /TEMPORAL_CONFIG_FILE/],
    [{ TEMPORAL_CONFIG_FILE: file('one.toml', '[profile.default]\naddress = "a:1"\n'), TEMPORAL_PROFILE: 'nope' }, /nope/],
    [{ TEMPORAL_TLS: 'maybe' }, /TEMPORAL_TLS/],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      JSON.stringify(env),
    );
  }
});

test('a Temporal call that came back UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED is Temporal unavailable; another status is not', () => {
  // As grpc-js rejects a call, wrapped as the client wraps a failed start.
  const failedStart = (code: number, details: string) =>
    new ServiceError('Failed to start Workflow', {
      cause: Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} }),
    });
  assert.equal(isTemporalUnavailable(failedStart(14, 'No connection established')), true);
  assert.equal(isTemporalUnavailable(failedStart(4, 'Deadline exceeded')), true);
  assert.equal(isTemporalUnavailable(failedStart(1, 'Call cancelled')), true);
  assert.equal(isTemporalUnavailable(failedStart(3, 'invalid search attribute')), false);
  assert.equal(isTemporalUnavailable(new Error('Call cancelled')), false);
});
