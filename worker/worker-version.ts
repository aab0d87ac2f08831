import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NativeConnection, WorkflowBundleOption } from '@temporalio/worker';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';

/** A worker build's place in Temporal's worker versioning: the Worker Deployment and the build id within it. */
export type WorkerVersion = { deploymentName: string; buildId: string };

/**
 * This worker's version, or undefined when versioning is off (no `TEMPORAL_WORKER_DEPLOYMENT`). Without an explicit
 * build id the id is a hash of the workflow bundle: a build that changes the workflow code (or turns tracing on, whose
 * interceptors draw on the workflow's random numbers) is a new version, one that changes only activities is not.
 */
export async function workerVersion(
  deployment: Config['temporal']['deployment'],
  bundle: WorkflowBundleOption,
): Promise<WorkerVersion | undefined> {
  if (!deployment) return undefined;
  if (deployment.buildId) return { deploymentName: deployment.name, buildId: deployment.buildId };
  const code = 'code' in bundle ? bundle.code : await readFile(bundle.codePath, 'utf8');
  return { deploymentName: deployment.name, buildId: `wf-${createHash('sha256').update(code).digest('hex').slice(0, 12)}` };
}

/**
 * Makes this build the deployment's current version, so new missions start on it, per `TEMPORAL_WORKER_PROMOTE`:
 * `first` only when the deployment has none yet (the first deploy; later ones are promoted by the operator after a
 * look at the new build), `always` at every start (a rolling deploy by restart), `never`. The server accepts a version
 * only once its pollers have reached it, so the call is retried for a while after the workers start.
 */
export async function promoteVersion(opts: {
  connection: NativeConnection;
  namespace: string;
  version: WorkerVersion;
  promote: 'first' | 'always' | 'never';
  logger: Logger;
  signal?: AbortSignal;
}): Promise<'promoted' | 'left'> {
  const { connection, namespace, version, promote, logger } = opts;
  if (promote === 'never') return 'left';
  const service = connection.workflowService;
  const deadline = Date.now() + 60_000;
  for (let attempt = 0; ; attempt++) {
    try {
      if (promote === 'first') {
        const current = await currentBuildId(connection, namespace, version.deploymentName);
        if (current !== undefined) {
          logger.info('worker version left as it is: the deployment has a current version', { ...version, current });
          return 'left';
        }
      }
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: `cadenza-worker/${version.buildId}`,
      });
      logger.info('worker version promoted: new missions start on this build', { ...version });
      return 'promoted';
    } catch (err) {
      // Not found (the deployment or version not yet known) or no pollers yet: the workers' first polls register it.
      if (Date.now() > deadline || opts.signal?.aborted) throw err;
      await sleep(Math.min(200 * 2 ** attempt, 2_000));
    }
  }
}

/** The build id of the deployment's current version; undefined when there is none (or no deployment yet). */
export async function currentBuildId(
  temporal: Pick<NativeConnection, 'workflowService'>,
  namespace: string,
  deploymentName: string,
): Promise<string | undefined> {
  try {
    const { workerDeploymentInfo } = await temporal.workflowService.describeWorkerDeployment({ namespace, deploymentName });
    const routing = workerDeploymentInfo?.routingConfig;
    const current = routing?.currentDeploymentVersion?.buildId || routing?.currentVersion;
    // The deprecated string form is "<deployment>.<build id>", or "__unversioned__" for none.
    if (!current || current === '__unversioned__') return undefined;
    return current.startsWith(`${deploymentName}.`) ? current.slice(deploymentName.length + 1) : current;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return undefined; // NOT_FOUND: no worker of it has polled yet
    throw err;
  }
}
