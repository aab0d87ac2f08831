import { test } from 'node:test';
import assert from 'node:assert/strict';
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
