import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

/** A Postgres cluster of the caller's own, which it may stop, start and restart: the outage tests and the chaos bench. */
export type OwnPostgres = {
  /** The admin URL (database `postgres`). */
  url: string;
  port: number;
  /** `pg_ctl stop -m fast`: every connection is closed, new ones are refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>;
  /** Creates a database of that name and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the cluster and removes its files. */
  destroy(): Promise<void>;
};

/** initdb + pg_ctl start on a free port, as the `postgres` user when root (Postgres refuses to run as root). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = findPgBin();
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-own-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, uid('postgres'), gid('postgres'));
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  const data = join(dir, 'data');
  await as(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const log = join(dir, 'server.log');
  const ctl = (...args: string[]) => as(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', ...args]);
  const options = (p: number) =>
    `-p ${p} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  // The port was free a moment ago; on a machine where other tests start servers too it may not be by now: try another.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await ctl('-o', options(port), 'start');
      break;
    } catch (err) {
      if (attempt === 3) throw new Error(`postgres did not start:\n${readFileSync(log, 'utf8').slice(-2_000)}`, { cause: err });
    }
  }
  const opts = options(port);
  let destroyed = false;
  const reap = () => {
    if (!destroyed) void ctl('-m', 'immediate', 'stop').catch(() => {});
  };
  process.once('exit', reap);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    stop: async () => void (await ctl('-m', 'fast', 'stop')),
    start: async () => void (await ctl('-o', opts, 'start')),
    restart: async () => void (await ctl('-m', 'fast', '-o', opts, 'restart')),
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return url.replace(/\/postgres$/, `/${name}`);
    },
    async destroy() {
      destroyed = true;
      process.off('exit', reap);
      await ctl('-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function findPgBin(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb'))) return dir;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(a) - Number(b)) : [];
  const last = versions.at(-1);
  if (!last) throw new Error('no PostgreSQL server binaries found: run the tests through scripts/test.sh (it installs them)');
  return join(root, last, 'bin');
}

const uid = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
const gid = (user: string) => Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
