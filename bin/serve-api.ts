import { Client, Connection } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { createHealthMonitor } from '../tools/health.ts';
import { createEventRelay } from '../server/event-relay.ts';
import { createHttpApi } from '../server/http-api.ts';
import { createEmbeddingsClient } from '../memory/embeddings-client.ts';
import { listen } from '../server/listen.ts';
import type { Shutdown } from './startup.ts';

/**
 * Connects the Temporal client and serves the API on PORT; on shutdown the HTTP server drains (SSE relays closed
 * first so long-lived streams end) before the Temporal connection closes.
 */
export async function serveApi(opts: {
  config: Config;
  temporalAddress: string;
  db: Kysely<Database>;
  logger: Logger;
  shutdown: Shutdown;
  registry: AppRegistry;
  secrets: SecretStore;
  /** The environment health-probe URLs may reference (`${NAME}`). */
  env: Record<string, string | undefined>;
}) {
  const connection = await Connection.connect({ address: opts.temporalAddress });
  opts.shutdown.add('temporal client', () => connection.close());
  const temporal = new Client({ connection, namespace: opts.config.temporal.namespace });
  const relay = createEventRelay({ temporal, logger: opts.logger });
  const app = createHttpApi({
    db: opts.db,
    temporal,
    config: opts.config,
    logger: opts.logger,
    registry: opts.registry,
    secrets: opts.secrets,
    health: createHealthMonitor({ env: opts.env }),
    embeddings: opts.config.embeddings ? createEmbeddingsClient(opts.config.embeddings) : undefined,
    relay,
    sseKeepAliveMs: 15_000,
  });
  const http = await listen(app, opts.config.port);
  opts.shutdown.add('http server', async () => {
    relay.close();
    await http.close();
  });
  return http;
}
