import { ensureSearchAttributes } from '../temporal/search-attributes.ts';
import { isTemporalUnavailable } from '../temporal/unavailable.ts';
import type { Client } from '@temporalio/client';
import type { Express } from 'express';
import { modelUnconfigured } from '../config/config.ts';
import { createToolCancels } from '../notify/tool-cancels.ts';
import { createEventRelay, type EventRelay } from '../events/relay.ts';
import { listMissionEvents } from '../db/mission-events.ts';
import { findFinalEvents } from '../db/missions.ts';
import { createHttpApi } from '../server/http-api.ts';
import { listen } from '../server/listen.ts';
import { tracingClientInterceptor } from '../temporal/client-tracing.ts';
import { connectTemporalClient } from '../temporal/connection.ts';
import { createHealthMonitor } from '../tools/health.ts';
import { readStoredMcpListings } from '../tools/mcp/mcp-load.ts';
import type { Resources } from './resources.ts';

/** The API of a process: its Temporal client, the SSE relay, the HTTP API and its server. */
export type BuiltApi = { url: string; port: number; app: Express; temporal: Client; relay: EventRelay };

/**
 * Connects the API's Temporal client (deadlines on every call, short reconnect backoff) and serves the HTTP API on
 * PORT; on shutdown the HTTP server drains (SSE relays closed first so long-lived streams end) before the Temporal
 * connection closes.
 */
export async function buildApi(
  res: Resources,
  opts: {
    temporalAddress: string;
    /** The environment providers' health-probe URLs may reference (`${NAME}`). */
    env: Record<string, string | undefined>;
    port?: number;
    host?: string;
    sseKeepAliveMs?: number;
    drainMs?: number;
    /** The Temporal Web UI (the embedded dev server's); else TEMPORAL_UI_URL. */
    temporalUiUrl?: string;
  },
): Promise<BuiltApi> {
  const { config, logger, shutdown } = res;
  const noModel = modelUnconfigured(config.model);
  if (noModel) logger.warn(`every mission start is refused (503 model_unconfigured): ${noModel}`);
  const { client: temporal, close: closeTemporal } = await connectTemporalClient(
    config.temporal,
    opts.temporalAddress,
    (err) => logger.warn('Temporal is not reachable yet: the API serves 503 and /readyz reports it until it is', { err }),
    res.tracing ? [tracingClientInterceptor(res.tracing.tracer)] : [],
  );
  shutdown.add('temporal client', closeTemporal);
  // Every start sets Cadenza's search attributes: registered now where the connection may, else start-up fails naming
  // the command; a Temporal still down is checked again by the first start that meets a missing one.
  await ensureSearchAttributes(temporal.connection, config.temporal.namespace, logger).catch((err: unknown) => {
    if (!isTemporalUnavailable(err)) throw err;
  });
  await refreshMcpListings(res);
  const relay = createEventRelay({
    temporal,
    logger,
    notifications: res.database.notifications,
    finalEvents: (missionId) => findFinalEvents(res.database.db, missionId),
    storedEvents: (missionId, afterSeq, upTo) => listMissionEvents(res.database.db, missionId, afterSeq, upTo),
  });
  res.metrics.watchRelay(() => relay.queryCounts());
  const app = createHttpApi({
    db: res.database.db,
    temporal,
    config,
    logger,
    registry: res.registry,
    secrets: res.secrets,
    health: createHealthMonitor({ env: opts.env }),
    embeddings: res.embeddings,
    vectors: res.vectors,
    relay,
    metrics: res.metrics,
    tracing: res.tracing,
    toolCancels: createToolCancels(res.database.notifications, { listen: false }),
    notifications: res.database.notifications,
    sseKeepAliveMs: opts.sseKeepAliveMs ?? 15_000,
    temporalUiUrl: opts.temporalUiUrl ?? config.temporal.uiUrl,
  });
  const http = await listen(app, { port: opts.port ?? config.port, host: opts.host, ...config.http });
  shutdown.add('http server', async () => {
    relay.close();
    await http.close(opts.drainMs);
  });
  return { url: http.url, port: http.port, app, temporal, relay };
}

// A worker that starts later (or again) stores a newer listing; the API picks it up within this interval.
const MCP_LISTING_REFRESH_MS = 15_000;

/** Reads the MCP listings the workers stored, now and then every MCP_LISTING_REFRESH_MS (when any app has an MCP server). */
async function refreshMcpListings(res: Resources): Promise<void> {
  const { registry, logger, shutdown } = res;
  if (registry.mcpApps.length === 0) return;
  const read = () =>
    readStoredMcpListings(res.database.db, registry).catch((err: unknown) =>
      logger.warn('could not read the stored MCP listings', { err: String(err) }),
    );
  await read();
  const timer = setInterval(() => void read(), MCP_LISTING_REFRESH_MS);
  timer.unref();
  shutdown.add('mcp listing refresh', () => clearInterval(timer));
}
