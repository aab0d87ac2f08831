import { NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { createActivities } from '../activities/index.ts';
import type { ModelClient } from '../model/model-types.ts';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import { createEmbeddingsClient } from '../memory/embeddings-client.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { createHealthMonitor } from '../tools/health.ts';
import { createSystemTools } from '../tools/system/index.ts';
import { createWorkers } from './create-workers.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';
import { buildWorkflowBundle } from './workflow-bundle.ts';

/** Connects, bundles the workflows once, and runs both workers until `stop()`. */
export async function startWorker(opts: {
  config: Config;
  temporalAddress: string;
  db: Kysely<Database>;
  registry: AppRegistry;
  modelClient: ModelClient;
  logger: Logger;
  secrets: SecretStore;
  env?: Record<string, string | undefined>;
  /** A prebuilt bundle (tests build one for all workers); bundled here when absent. */
  workflowBundle?: WorkflowBundleOption;
}) {
  installTemporalRuntime(opts.logger);
  const connection = await NativeConnection.connect({ address: opts.temporalAddress });
  const workflowBundle = opts.workflowBundle ?? (await buildWorkflowBundle());
  const activities = createActivities({
    db: opts.db,
    modelClient: opts.modelClient,
    registry: opts.registry,
    model: opts.config.model,
    systemTools: createSystemTools(opts.config.scripts),
    embeddings: opts.config.embeddings ? createEmbeddingsClient(opts.config.embeddings) : undefined,
    logger: opts.logger,
    env: opts.env ?? process.env,
    secrets: opts.secrets,
    health: createHealthMonitor({ env: opts.env ?? process.env }),
    maxToolsPerMission: opts.config.maxToolsPerMission,
  });
  const workers = await createWorkers({ connection, config: opts.config, activities, workflowBundle }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  const running = workers.run();
  running.catch((err: unknown) => opts.logger.error('worker stopped with an error', { err }));
  return {
    workers,
    running,
    async stop() {
      await workers.shutdown();
      await connection.close();
    },
  };
}
