import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The real entry points started as processes with a configuration they cannot run with (config.test.ts tests
// loadConfig itself).
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(script: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((ok) => {
    const child = execFile(
      process.execPath,
      [script],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (_err, _out, stderr) => ok({ code: child.exitCode, stderr }),
    );
  });
}

test('the production processes exit 1 naming the variable they miss', async () => {
  const api = await run('bin/api.ts', { DATABASE_URL: 'postgres://cadenza@127.0.0.1:1/cadenza' });
  assert.equal(api.code, 1);
  assert.match(api.stderr, /TEMPORAL_ADDRESS/);
  assert.doesNotMatch(api.stderr, /DATABASE_URL/);

  const worker = await run('bin/worker.ts', { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  assert.equal(worker.code, 1);
  assert.match(worker.stderr, /DATABASE_URL/);
  assert.doesNotMatch(worker.stderr, /TEMPORAL_ADDRESS/);
});
