import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../testkit/free-port.ts';

/**
 * A real OpenBao dev server (in-memory, unsealed, KV v2 at `secret/`), from the binary scripts/openbao.sh fetched;
 * `stop()` ends it.
 */
export async function startOpenBao() {
  const bin = process.env.CADENZA_BAO;
  if (!bin) throw new Error('CADENZA_BAO is not set: run the tests through scripts/test.sh (it fetches OpenBao)');
  const port = await freePort();
  const token = `root-${randomBytes(8).toString('hex')}`;
  const child = spawn(bin, ['server', '-dev', `-dev-root-token-id=${token}`, `-dev-listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const address = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bao exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${address}/v1/sys/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`bao did not become healthy: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address,
    token,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
