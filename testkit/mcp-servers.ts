import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';
import { until } from './until.ts';

const require = createRequire(import.meta.url);

/** The reference MCP servers installed from npm (devDependencies), run with this Node. */
export const EVERYTHING_SERVER = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
/** Wraps a stdio server and records what it receives and sends (see the script). */
export const RECORD_STDIO = fileURLToPath(new URL('../test/fixtures/mcp/record-stdio.ts', import.meta.url));
/** A process that reads its stdin and never answers: an MCP server that hangs at start-up. */
export const SILENT_SERVER = ['-e', 'process.stdin.resume()'];

/** Writes `apps/<id>/app.yml` for each entry. */
export function writeApps(appsDir: string, apps: Record<string, string>): void {
  for (const [id, yml] of Object.entries(apps)) {
    mkdirSync(join(appsDir, id), { recursive: true });
    writeFileSync(join(appsDir, id, 'app.yml'), yml);
  }
}

/** An app.yml declaring a stdio MCP server run by this Node (`node <args...>`), with extra `mcp:` lines. */
export function stdioApp(id: string, args: string[], extra: string[] = []): string {
  return [
    `id: ${id}`,
    `name: ${id}`,
    `description: MCP app ${id}.`,
    'mcp:',
    `  command: ${JSON.stringify([process.execPath, ...args])}`,
    ...extra.map((l) => `  ${l}`),
    '',
  ].join('\n');
}

/** One JSON-RPC line a recorded server received (`in`) or sent (`out`). */
export type RecordedMessage = {
  at: number;
  dir: 'in' | 'out';
  message: { id?: number | string; method?: string; params?: { name?: string; requestId?: number | string }; result?: unknown };
};

/** What the recorder wrote so far. */
export function readRecord(file: string): RecordedMessage[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordedMessage);
}

/** The everything server over Streamable HTTP on a free port, stopped by `close`. */
export async function startEverythingHttp(): Promise<{ url: string; close(): Promise<void>; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: dirname(EVERYTHING_SERVER),
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await until(() => stderr.includes('listening on port'), { what: 'the Streamable HTTP everything server', timeoutMs: 20_000 });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    close: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once('exit', () => ok());
        child.kill('SIGTERM');
      }),
  };
}
