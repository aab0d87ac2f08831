import assert from 'node:assert/strict';
import { createServer as createSecureLessServer } from 'node:http2';
import { test } from 'node:test';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../config/config.ts';
import {
  TEMPORAL_CALL_DEADLINE_MS,
  TEMPORAL_MAX_RECONNECT_BACKOFF_MS,
  temporalClientOptions,
  temporalConnectionOptions,
} from '../../temporal/connection.ts';
import { isTemporalUnavailable } from '../../temporal/unavailable.ts';

// The Temporal connection's options on the wire, against local HTTP/2 stand-ins for the frontend (the options
// themselves, read from the configuration, are tested in test/unit/temporal-connection.test.ts).

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
