import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_NAMES } from '../contracts/mission.ts';

/** A running `temporal server start-dev` child process. */
export type DevServer = { address: string; uiUrl: string | undefined; stop(): Promise<void> };

export type DevServerOptions = {
  cliPath: string;
  port: number;
  /** Web UI port; omit for a headless server. */
  uiPort?: number;
  /** SQLite file; omit for an in-memory server. */
  dbFile?: string;
  readyTimeoutMs?: number;
  extraArgs?: string[];
  /** Raise the single shard's task-queue poll rate (default true); false keeps Temporal's stock setting. */
  tuned?: boolean;
  /** Register Cadenza's search attributes (default true); false starts a namespace that lacks them, as a bare server's does. */
  searchAttributes?: boolean;
};

/**
 * Starts the Temporal CLI dev server with this project's search attributes and waits until it answers
 * (on its own clock: the SDK's 5-second start window is too short on a loaded 2-core machine).
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${opts.port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  args.push('--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true');
  // The dev server has one history shard, and a shard reads its transfer queue at most 20 times a second by default:
  // every task would wait ~40 ms under steady load (bench/README.md). Production clusters spread this over many shards.
  if (opts.tuned !== false) args.push('--dynamic-config-value', 'history.transferProcessorMaxPollRPS=10000');
  if (opts.searchAttributes !== false) for (const name of SEARCH_ATTRIBUTE_NAMES) args.push('--search-attribute', `${name}=Keyword`);
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.dbFile) {
    mkdirSync(dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  try {
    await waitUntilServing(address, opts.readyTimeoutMs ?? 60_000, exited, () => stderr);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : undefined,
    stop: () => stopChild(child, exited),
  };
}

async function waitUntilServing(address: string, timeoutMs: number, exited: Promise<number | null>, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void exited.then(() => (dead = true));
  while (Date.now() < deadline) {
    if (dead) throw new Error(`temporal dev server exited during start-up:\n${log()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }
  throw new Error(`temporal dev server at ${address} not ready after ${timeoutMs} ms:\n${log()}`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
