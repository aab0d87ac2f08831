import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { basename } from 'node:path';

// Preloaded (NODE_OPTIONS=--import) into the unit layer's runner and every test file it runs (scripts/test-unit.sh),
// so the layer stays pure: a unit test that opens a TCP connection (pg, fetch, gRPC, a socket to anything, even
// 127.0.0.1), listens on a TCP port (a stub server, freePort) or starts a service process fails at that call,
// naming what it did. Such a test belongs in test/integration/. Every socket path of node goes through
// Socket#connect and Server#listen; native code (Temporal's Rust core) is out of reach, and is kept out of the layer
// by leaving TEMPORAL_ADDRESS unset. Child processes are allowed (node itself, git), except the services below.

const SERVICES = new Set(['temporal', 'postgres', 'pg_ctl', 'initdb', 'bao', 'openbao', 'bwrap', 'chromium']);

function refuse(what: string): never {
  throw new Error(`unit layer: ${what}; a test that needs this belongs in test/integration/ (see test/unit-guard.ts)`);
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  // net.connect() passes its normalized arguments as one array; a string or a `path` is a Unix socket, allowed.
  const [first, host] = (Array.isArray(args[0]) ? args[0] : args) as unknown[];
  const options = (typeof first === 'object' && first !== null ? first : { port: first, host }) as ConnectTarget;
  if (options.path === undefined && typeof first !== 'string') {
    refuse(`a TCP connection to ${options.host ?? 'localhost'}:${String(options.port)}`);
  }
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof connect;

type ConnectTarget = { path?: string; port?: unknown; host?: unknown };

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function guardedListen(this: net.Server, ...args: unknown[]) {
  const [first] = args;
  const pipe = typeof first === 'string' || (typeof first === 'object' && first !== null && 'path' in first);
  if (!pipe) refuse('a server listening on a TCP port');
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;

for (const name of ['spawn', 'spawnSync', 'execFile', 'execFileSync'] as const) {
  const original = childProcess[name] as (...a: unknown[]) => unknown;
  (childProcess as unknown as Record<string, unknown>)[name] = function guardedSpawn(file: unknown, ...rest: unknown[]) {
    if (typeof file === 'string' && SERVICES.has(basename(file))) refuse(`starting ${basename(file)}`);
    return original.call(this, file, ...rest);
  };
}
// Named imports (`import { spawn } from 'node:child_process'`) see the guarded functions too.
syncBuiltinESMExports();
