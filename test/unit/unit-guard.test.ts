import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

// The unit layer's guard (test/unit-guard.ts), preloaded into a node of its own as scripts/test-unit.sh does, so this
// test says the same whether or not the runner running it preloaded the guard.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const attempts = `
import { connect } from 'node:net';
import { createServer } from 'node:http';
import { spawnSync, execFileSync } from 'node:child_process';
import pg from 'pg';
const outcome = async (f) => { try { await f(); return 'allowed'; } catch (e) { return String(e.cause ?? e.message ?? e); } };
const unix = () => new Promise((ok) => connect('/nonexistent/cadenza.sock').on('error', ok));
console.log(JSON.stringify({
  tcp: await outcome(() => connect(5432, '127.0.0.1')),
  pg: await outcome(() => new pg.Client({ connectionString: 'postgres://u@127.0.0.1:5432/d' }).connect()),
  fetch: await outcome(() => fetch('http://127.0.0.1:8080/')),
  listen: await outcome(() => createServer().listen(0, '127.0.0.1')),
  temporal: await outcome(() => spawnSync('/opt/bin/temporal', ['server', 'start-dev'])),
  postgres: await outcome(() => spawnSync('postgres', ['-D', '/tmp/x'])),
  node: await outcome(() => execFileSync(process.execPath, ['-e', ''])),
  unixSocket: await outcome(unix),
}));
`;

test('the unit layer refuses TCP connections, TCP servers and service processes, and allows node and Unix sockets', () => {
  const out = execFileSync(process.execPath, ['--import=./test/unit-guard.ts', '--input-type=module', '-e', attempts], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const seen = JSON.parse(out) as Record<string, string>;
  assert.match(seen.tcp!, /unit layer: a TCP connection to 127\.0\.0\.1:5432/);
  assert.match(seen.pg!, /unit layer: a TCP connection to 127\.0\.0\.1:5432/);
  assert.match(seen.fetch!, /unit layer: a TCP connection to 127\.0\.0\.1:8080/);
  assert.match(seen.listen!, /unit layer: a server listening on a TCP port/);
  assert.match(seen.temporal!, /unit layer: starting temporal/);
  assert.match(seen.postgres!, /unit layer: starting postgres/);
  assert.equal(seen.node, 'allowed');
  assert.equal(seen.unixSocket, 'allowed');
});
