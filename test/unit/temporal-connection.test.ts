import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createSecureLessServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ConfigError, loadConfig } from '../../config/config.ts';
import {
  TEMPORAL_CALL_DEADLINE_MS,
  TEMPORAL_MAX_RECONNECT_BACKOFF_MS,
  temporalClientOptions,
  temporalConnectionOptions,
} from '../../temporal/connection.ts';
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

test("the API's client bounds every call with a deadline and its reconnect backoff to a few seconds", async () => {
  // A frontend that accepts calls and never answers them.
  const server = createSecureLessServer();
  server.on('stream', () => {});
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  const options = temporalClientOptions(loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` }).temporal);
  assert.equal(options.channelArgs?.['grpc.max_reconnect_backoff_ms'], TEMPORAL_MAX_RECONNECT_BACKOFF_MS);
  const connection = Connection.lazy(options);
  const t0 = performance.now();
  try {
    await assert.rejects(connection.workflowService.getSystemInfo({}), (err: unknown) => isTemporalUnavailable(err));
  } finally {
    await connection.close();
    server.close();
  }
  const ms = performance.now() - t0;
  console.log(`# figure: a call to a Temporal that never answers gave up after ${Math.round(ms)} ms`);
  assert.ok(ms >= TEMPORAL_CALL_DEADLINE_MS - 100 && ms < TEMPORAL_CALL_DEADLINE_MS + 5_000, `gave up after ${ms} ms`);
});

test('the API key and extra headers go out on the wire, from the API client and from the worker connection', async () => {
  // A plain HTTP/2 server standing in for the frontend: it records each gRPC call's headers and answers UNAVAILABLE.
  const seen: Array<Record<string, unknown>> = [];
  const server = createSecureLessServer();
  server.on('stream', (stream, headers) => {
    seen.push({ ...headers });
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '14', 'grpc-message': 'stand-in' }));
    stream.end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  const config = loadConfig({
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    TEMPORAL_API_KEY: 'wire-key-789',
    // Plain text so the stand-in can read the headers; with a key, TLS is otherwise on.
    TEMPORAL_TLS: 'false',
    TEMPORAL_GRPC_META_X_TENANT: 'acme',
  });
  try {
    const connection = Connection.lazy(temporalClientOptions(config.temporal));
    await assert.rejects(connection.workflowService.getSystemInfo({}));
    await connection.close();
    await assert.rejects(NativeConnection.connect(temporalConnectionOptions(config.temporal)));
  } finally {
    server.close();
  }
  assert.ok(seen.length >= 2, `calls seen: ${seen.length}`);
  const fromClient = seen[0]!;
  assert.equal(fromClient.authorization, 'Bearer wire-key-789');
  assert.equal(fromClient['x-tenant'], 'acme');
  assert.ok(
    seen.slice(1).some((h) => h.authorization === 'Bearer wire-key-789'),
    'the native (worker) connection sends the key too',
  );
});
