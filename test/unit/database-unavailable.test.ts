import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../db/connection-errors.ts';
import { scrubAddresses } from '../../lib/scrub-addresses.ts';
import { ToolTransportError } from '../../tools/http-executor.ts';
import { freePort } from '../../testkit/free-port.ts';

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

test('server shutdown, start-up and connection-class SQLSTATEs and lost connections are unavailable; query errors are not', () => {
  const dbError = (code: string) => Object.assign(new pg.DatabaseError('x', 1, 'error'), { code });
  for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300']) assert.equal(isDatabaseUnavailable(dbError(code)), true, code);
  for (const code of ['23505', '42P01', '22P02', '40001']) assert.equal(isDatabaseUnavailable(dbError(code)), false, code);
  assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
  assert.equal(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), true);
  assert.equal(isDatabaseUnavailable(new Error('Connection terminated due to connection timeout')), true);
  assert.equal(isDatabaseUnavailable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), true);
  assert.equal(isDatabaseUnavailable(new Error('relation "missions" does not exist')), false);
  assert.equal(isDatabaseUnavailable('ECONNREFUSED'), false);
});

test('a tool or provider network failure (wrapped by its client) is not taken for the database', () => {
  const net = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  const fetchFailed = new TypeError('fetch failed', { cause: net });
  const bare = { throughCauses: false };
  assert.equal(isDatabaseUnavailable(fetchFailed, bare), false);
  assert.equal(isDatabaseUnavailable(new ToolTransportError('lab.scan: request failed', { cause: fetchFailed }), bare), false);
  assert.equal(isDatabaseUnavailable(net, bare), true, "a bare socket error is the driver's");
});

test('addresses are scrubbed from messages, the rest is kept', () => {
  const cases: Array<[string, string]> = [
    ['connect ECONNREFUSED 127.0.0.1:5432', 'connect ECONNREFUSED [address]'],
    ['connect ECONNREFUSED ::1:5432', 'connect ECONNREFUSED [address]'],
    ['connect ECONNREFUSED [::1]:5432', 'connect ECONNREFUSED [address]'],
    ['lab.scan: request failed: http://10.1.2.3:9000/scan timed out', 'lab.scan: request failed: [address] timed out'],
    ['could not reach db.internal.example:5432 (pool)', 'could not reach [address] (pool)'],
    ['getaddrinfo ENOTFOUND postgres', 'getaddrinfo ENOTFOUND [address]'],
    ['no route to localhost:7233', 'no route to [address]'],
  ];
  for (const [raw, want] of cases) assert.equal(scrubAddresses(raw), want, raw);
  for (const kept of [
    'model call failed (attempt 2): 529 overloaded',
    'turn 3: tool lab__scan at 10:30:05',
    'Skill::run is not a tool',
    'version 1.2.3',
  ]) {
    assert.equal(scrubAddresses(kept), kept);
  }
});
