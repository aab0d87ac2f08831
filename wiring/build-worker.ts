import type { WorkflowBundleOption } from '@temporalio/worker';
import { createModelClient } from '../model/create-model-client.ts';
import { createModelTargets } from '../model/model-targets.ts';
import { createLivePublisher } from '../events/live-publisher.ts';
import { createToolCancels } from '../notify/tool-cancels.ts';
import type { ModelClient } from '../model/model-types.ts';
import { createHealthMonitor } from '../tools/health.ts';
import { listMcpServers } from '../tools/mcp/mcp-load.ts';
import { createMcpPool } from '../tools/mcp/mcp-pool.ts';
import type { LivePublisher } from '../contracts/events.ts';
import { createSystemTools } from '../tools/system/index.ts';
import { startWorker, type RunningWorker } from '../worker/start-worker.ts';
import { reembedStoredVectors } from '../memory/reembed.ts';
import { sandboxNotices } from '../skill-scripts/host-notices.ts';
import type { Resources } from './resources.ts';
import { openWorkerConnections } from './worker-connections.ts';

/**
 * Lists the MCP apps' servers, then starts the process's workers (missions and model calls) on the shared resources; stopped on shutdown, letting
 * running activities finish for up to SHUTDOWN_GRACE_SECONDS.
 */
export async function buildWorker(
  res: Resources,
  opts: {
    temporalAddress: string;
    /** The environment HTTP tool headers may reference (`${NAME}`). */
    env: Record<string, string | undefined>;
    /** Another model endpoint than the configured one (the demo's fake model server). */
    modelClient?: ModelClient;
    workflowBundle?: WorkflowBundleOption;
    /** Where tool progress and streamed text go (absent: nowhere). */
    live?: LivePublisher;
    /** False: events are never pushed, only announced (bench/push-vs-query.ts). */
    pushEvents?: boolean;
  },
): Promise<RunningWorker> {
  const { config, logger } = res;
  // Said once at start: what the script sandbox enforces on this host, and what it cannot.
  for (const notice of await sandboxNotices(config.scripts)) logger[notice.level](`skill scripts: ${notice.message}`);
  // Closed after the worker stops (clean-up runs in reverse), so no running call loses its server.
  const mcp = createMcpPool({ env: opts.env, logger });
  res.shutdown.add('mcp servers', () => mcp.close());
  // Before polling: a mission prepared on this worker sees the MCP tools it can call.
  await listMcpServers({ registry: res.registry, pool: mcp, db: res.database.db, logger });
  const modelClient = opts.modelClient ?? createModelClient(config.model);
  const worker = await startWorker({
    ...(await openWorkerConnections(res, opts.temporalAddress)),
    config,
    logger,
    metrics: res.metrics,
    tracing: res.tracing,
    activityDeps: {
      db: res.database.db,
      modelClient,
      modelTargets: createModelTargets(config.model, modelClient),
      registry: res.registry,
      systemTools: createSystemTools(config.scripts),
      model: config.model,
      embeddings: res.embeddings,
      vectors: res.vectors,
      logger,
      env: opts.env,
      databaseOutageWaitSeconds: config.databaseOutageWaitSeconds,
      secrets: res.secrets,
      health: createHealthMonitor({ env: opts.env }),
      maxToolsPerMission: config.maxToolsPerMission,
      missionFiles: config.missionFiles,
      factory: { maxAttempts: config.factory.maxAttempts, scripts: config.scripts },
      mcp,
      live: opts.live ?? createLivePublisher(res.database.notifications),
      approvalTimeoutS: config.approvalTimeoutS,
      sessionIdleTtlS: config.sessions.idleTtlS,
      compaction: config.compaction,
      toolCancels: createToolCancels(res.database.notifications, { listen: true }),
    },
    notifications: res.database.notifications,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : {}),
    ...(opts.pushEvents === false ? { pushEvents: false } : {}),
  });
  res.shutdown.add('worker', () => worker.stop());
  // Memories and skill chunks stored without a vector, or by another encoder, get one from this one, beside the missions.
  const reembedding = new AbortController();
  const reembedded = reembedStoredVectors({ db: res.database.db, embeddings: res.embeddings, logger }, reembedding.signal);
  res.shutdown.add('re-embedding', async () => {
    reembedding.abort();
    await reembedded;
  });
  return worker;
}
