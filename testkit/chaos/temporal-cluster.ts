import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

/**
 * The real Temporal server as four service processes on a Postgres and its Web UI (scripts/temporal-cluster.sh, on
 * deploy/temporal/, the one description of how the cluster is set up and started), with a handle to kill -9 one
 * service and start it again, as an operator's supervisor would. With `tls`, the frontend serves TLS with a CA made at
 * start (`caPath`). The script's shell stays up as the parent of the first processes; restarted ones are ours.
 */
export async function startTemporalCluster(pg: { port: number; user: string }, log: (line: string) => void, opts: { tls?: boolean } = {}) {
  const shell = spawn(
    'bash',
    [
      '-c',
      'source scripts/bootstrap.sh >&2; source scripts/temporal-cluster.sh; start_temporal_cluster 127.0.0.1 "$0" "$1" >&2; ' +
        'echo "READY $TEMPORAL_ADDRESS $TEMPORAL_SERVER_DIR $TEMPORAL_CLUSTER_DIR ${TEMPORAL_UI_URL:--} ${TLS_CA:--} ${TEMPORAL_CLUSTER_PIDS[*]}"; wait',
      String(pg.port),
      pg.user,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TEMPORAL_CLUSTER_TLS: opts.tls ? '1' : '0' } },
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
  const [, address, serverDir, clusterDir, uiUrl, caPath, ...pids] = ready.split(' ');
  const pidOf = new Map<ClusterService, number>(CLUSTER_SERVICES.map((s, i) => [s, Number(pids[i])]));
  // The Web UI server's, when it runs (the script's shell waits for it too).
  const others = pids.slice(CLUSTER_SERVICES.length).map(Number);
  const restarted: ChildProcess[] = [];
  log(`Temporal cluster at ${address} (services ${CLUSTER_SERVICES.map((s) => `${s} ${pidOf.get(s)}`).join(', ')})`);
  return {
    address: address!,
    /** The Web UI server's URL (undefined when it could not be built). */
    uiUrl: uiUrl === '-' ? undefined : uiUrl,
    /** The CA the frontend's certificate chains to (undefined without TLS). */
    caPath: caPath === '-' ? undefined : caPath,
    /** kill -9 of one service process. */
    kill(service: ClusterService) {
      process.kill(pidOf.get(service)!, 'SIGKILL');
    },
    /** Starts the service again with the cluster's one config. */
    start(service: ClusterService) {
      const out = openSync(join(clusterDir!, `${service}.log`), 'a');
      const child = spawn('sh', [join(ROOT, 'deploy/temporal/start-service.sh'), service], {
        stdio: ['ignore', out, out],
        env: { ...process.env, TEMPORAL_ROOT: clusterDir!, TEMPORAL_SERVER: join(serverDir!, 'temporal-server') },
      });
      restarted.push(child);
      pidOf.set(service, child.pid!);
    },
    async stop() {
      for (const pid of [...pidOf.values(), ...others]) {
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
