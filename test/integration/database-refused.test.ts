import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../db/connection-errors.ts';
import { freePort } from '../../testkit/free-port.ts';

// The real driver's error for a refused connection (test/unit/database-unavailable.test.ts classifies built errors).

test('a refused Postgres connection (real pg client, nothing listening) is recognised as the database being unavailable', async () => {
  const port = await freePort();
  const client = new pg.Client({ connectionString: `postgres://u@127.0.0.1:${port}/db` });
  const err = await client.connect().then(
    () => assert.fail('connected to nothing'),
    (e: unknown) => e,
  );
  assert.equal(isDatabaseUnavailable(err), true);
  assert.match(String(err), new RegExp(`127\\.0\\.0\\.1:${port}`), 'the raw error names the address (scrubbed later)');
});

test('a Postgres that accepts but never answers within the connect timeout (real pg client and pool) is unavailable', async () => {
  // A listener that takes the connection and says nothing: a server overloaded or half-dead at the other end.
  const sockets: net.Socket[] = [];
  const silent = net.createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as net.AddressInfo;
  const connectionString = `postgres://u@127.0.0.1:${port}/db`;
  try {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 200 });
    const clientErr = await client.connect().then(
      () => assert.fail('connected to a silent server'),
      (e: unknown) => e,
    );
    assert.equal(isDatabaseUnavailable(clientErr), true, `the client's own timeout: ${String(clientErr)}`);
    const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 200 });
    const poolErr = await pool.query('select 1').then(
      () => assert.fail('queried a silent server'),
      (e: unknown) => e,
    );
    await pool.end();
    assert.equal(isDatabaseUnavailable(poolErr), true, `the pool's timeout: ${String(poolErr)}`);
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
