import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

/**
 * The real Temporal server as four service processes on a Postgres (scripts/temporal-cluster.sh, the one description
 * of how the cluster is set up and started), with a handle to kill -9 one service and start it again, as an operator's
 * supervisor would. The script's shell stays up as the parent of the first processes; restarted ones are ours.
 */
export async function startTemporalCluster(pg: { port: number; user: string }, log: (line: string) => void) {
  const shell = spawn(
    'bash',
    [
      '-c',
      'source scripts/bootstrap.sh >&2; source scripts/temporal-cluster.sh; start_temporal_cluster 127.0.0.1 "$0" "$1" >&2; ' +
        'echo "READY $TEMPORAL_ADDRESS $TEMPORAL_SERVER_DIR $TEMPORAL_CLUSTER_DIR ${TEMPORAL_CLUSTER_PIDS[*]}"; wait',
      String(pg.port),
      pg.user,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  shell.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4_000)));
  const ready = await new Promise<string>((ok, fail) => {
    let out = '';
    shell.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = /^READY .*$/m.exec(out)?.[0];
      if (line) ok(line);
    });
    shell.once('exit', (code) => fail(new Error(`the Temporal cluster did not start (exit ${code}):\n${stderr}`)));
  });
  const [, address, serverDir, clusterDir, ...pids] = ready.split(' ');
  const pidOf = new Map<ClusterService, number>(CLUSTER_SERVICES.map((s, i) => [s, Number(pids[i])]));
  const restarted: ChildProcess[] = [];
  log(`Temporal cluster at ${address} (services ${CLUSTER_SERVICES.map((s) => `${s} ${pidOf.get(s)}`).join(', ')})`);
  return {
    address: address!,
    /** kill -9 of one service process. */
    kill(service: ClusterService) {
      process.kill(pidOf.get(service)!, 'SIGKILL');
    },
    /** Starts the service again with the cluster's one config. */
    start(service: ClusterService) {
      const out = openSync(join(clusterDir!, `${service}.log`), 'a');
      const child = spawn(
        join(serverDir!, 'temporal-server'),
        ['--root', clusterDir!, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start', '--service', service],
        { stdio: ['ignore', out, out] },
      );
      restarted.push(child);
      pidOf.set(service, child.pid!);
    },
    async stop() {
      for (const pid of pidOf.values()) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      const running = [shell, ...restarted].filter((c) => c.exitCode === null && c.signalCode === null);
      await Promise.all(running.map((c) => new Promise((ok) => c.once('exit', ok))));
    },
  };
}
export type TemporalCluster = Awaited<ReturnType<typeof startTemporalCluster>>;
