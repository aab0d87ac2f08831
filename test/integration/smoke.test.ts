import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { freePort } from '../../testkit/free-port.ts';

const CADENZA = fileURLToPath(new URL('../../bin/cadenza.ts', import.meta.url));
const GRACE_SECONDS = 3;

describe('the embedded stack (bin/cadenza.ts)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-smoke-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('boots its own dev server, PGlite, worker and API, reports ready, and stops cleanly on SIGTERM', async () => {
    const [port, devPort, uiPort] = [await freePort(), await freePort(), await freePort()];
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(devPort),
      TEMPORAL_UI_PORT: String(uiPort),
      DATA_DIR: dataDir,
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      LOG_LEVEL: 'info',
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [CADENZA], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
    try {
      const ready = await poll(`http://127.0.0.1:${port}/readyz`, 90_000);
      assert.equal(ready.status, 200, output);
      assert.deepEqual(await ready.json(), { status: 'ok', checks: { database: true, temporal: true, searchAttributes: true } });
      const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
      assert.equal(ui.status, 200, 'the Temporal Web UI answers');
      assert.match(output, /Cadenza is running/);
      assert.match(output, /pglite/);
    } finally {
      child.kill('SIGTERM');
    }
    const code = await Promise.race([exited, new Promise((ok) => setTimeout(() => ok('still running'), (GRACE_SECONDS + 20) * 1000))]);
    assert.equal(code, 0, `exit after SIGTERM: ${String(code)}\n${output}`);
    assert.match(output, /"msg":"stopped"/);
    await assert.rejects(fetch(`http://127.0.0.1:${uiPort}/`), 'the dev server stopped with it');
  });
});

async function poll(url: string, timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200 || Date.now() > deadline) return res;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((ok) => setTimeout(ok, 250));
  }
}
