import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer, type DevServer } from '../temporal/dev-server.ts';
import { resolveTemporalCli } from '../temporal/resolve-cli.ts';
import { freePort } from './free-port.ts';

/**
 * A Temporal dev server of a test's own, for outages: on a fixed port with its state in a file, so `stop()` is an
 * outage and `start()` brings the same server back with every workflow it held. `close()` stops it and deletes the file.
 */
export async function startOwnTemporal(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `cadenza-${name}-`));
  const port = await freePort();
  const launch = () => startDevServer({ cliPath: resolveTemporalCli(), port, dbFile: join(dir, 'temporal.db') });
  let server: DevServer | undefined = await launch();
  return {
    address: `127.0.0.1:${port}`,
    async stop(): Promise<void> {
      await server?.stop();
      server = undefined;
    },
    async start(): Promise<void> {
      server ??= await launch();
    },
    async close(): Promise<void> {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
