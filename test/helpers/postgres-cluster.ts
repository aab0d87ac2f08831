import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../testkit/free-port.ts';

/** A throw-away Postgres cluster of a test's own, which the test may stop, start and restart (as scripts/test-postgres.sh makes one). */
export type PostgresCluster = { url: string; stop(): void; start(): void; restart(): void; destroy(): void };

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-pgc-'));
  const port = await freePort();
  // Postgres refuses to run as root: run it as the postgres system user, as the test scripts do.
  const root = process.getuid?.() === 0;
  if (root)
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const run = (tool: string, args: string[]) => {
    const [cmd, argv] = root ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    execFileSync(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const ctl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', options, ...args]);
  ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => ctl('-m', 'fast', 'stop'),
    start: () => ctl('start'),
    restart: () => ctl('-m', 'fast', 'restart'),
    destroy() {
      try {
        ctl('-m', 'immediate', 'stop');
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgBin(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`)) return `/usr/lib/postgresql/${v}/bin`;
  const which = execFileSync('sh', ['-c', 'dirname "$(command -v pg_ctl)"']).toString().trim();
  if (which && existsSync(join(which, 'initdb'))) return which;
  throw new Error('no Postgres server binaries found (scripts/test-postgres.sh installs them)');
}
