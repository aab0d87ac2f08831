import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The MCP Inspector's own launcher (`npx mcp-inspector`), from the dev dependency `@modelcontextprotocol/inspector`. */
const INSPECTOR = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);

/** One run of `mcp-inspector --cli`: its exit status, its output, and the result it printed (`--format json` wraps it as `{ result }`). */
export type InspectorRun = { code: number | null; stdout: string; stderr: string; json: <T>() => T };

/**
 * Runs `mcp-inspector --cli --transport http --server-url <url> --header "Authorization: Bearer <key>" <args>` as a
 * person or a CI job would, with a home of its own (the Inspector keeps a catalog and OAuth state under ~) and
 * `--stored-auth-only` (a refused key must fail, not open a browser for OAuth).
 */
export function runInspector(url: string, key: string, args: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'cadenza-inspector-'));
  const argv = [INSPECTOR, '--cli', '--transport', 'http', '--server-url', url, '--header', `Authorization: Bearer ${key}`];
  const child = spawn(process.execPath, [...argv, '--stored-auth-only', '--format', 'json', ...args], {
    env: { ...process.env, HOME: home, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<InspectorRun>((ok, fail) => {
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr, json: <T>() => (JSON.parse(stdout) as { result: T }).result }));
  });
  return { done, signal: (s: NodeJS.Signals) => child.kill(s) };
}

const MCPDO = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js', import.meta.url));

/**
 * The Inspector's connection CLI (`mcpdo`, in the same package): one connection held by a daemon of its own (a private
 * daemon directory and token, a home of its own), then commands against it, each a process. `stop` ends the daemon.
 */
export function mcpdoSession() {
  const home = mkdtempSync(join(tmpdir(), 'cadenza-mcpdo-'));
  const env = {
    ...process.env,
    HOME: home,
    NO_COLOR: '1',
    MCP_INSPECTOR_DAEMON_DIR: join(home, 'daemon'),
    MCP_INSPECTOR_DAEMON_TOKEN: randomBytes(24).toString('base64url'),
  };
  const run = (args: string[]) => {
    const child = spawn(process.execPath, [MCPDO, '--format', 'json', '--stored-auth-only', '--connection', 'cadenza', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    return new Promise<InspectorRun>((ok, fail) => {
      child.on('error', fail);
      child.on('close', (code) => ok({ code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T }));
    });
  };
  return { run, stop: () => run(['daemon', 'stop']) };
}
