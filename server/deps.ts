import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import type { HealthMonitor } from '../tools/health.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Notifications } from '../notify/notifications.ts';
import type { ToolCancels } from '../notify/tool-cancels.ts';
import type { EventRelay } from '../events/relay.ts';

/** What the HTTP API needs; every piece built once by the process's composition root. */
export type ApiDeps = {
  db: Kysely<Database>;
  temporal: Client;
  config: Pick<
    Config,
    | 'adminKey'
    | 'bodyLimitBytes'
    | 'maxTurnsCap'
    | 'temporal'
    | 'model'
    | 'budgets'
    | 'embeddings'
    | 'skills'
    | 'admission'
    | 'sessions'
    | 'webhooks'
    | 'evals'
  >;
  logger: Logger;
  /** The installed apps, for checks at authoring time (a skill naming a tool that does not exist). */
  registry: AppRegistry;
  /** Provider keys: written and listed here, values never read back out. */
  secrets: SecretStore;
  /** The providers' health probes, for the catalogue's availability. */
  health: HealthMonitor;
  /** Embeddings for memories written and searched through the API, when configured. */
  embeddings: EmbeddingsClient | undefined;
  /** How retrieval and discovery compare vectors (pgvector or in process), chosen at start. */
  vectors: VectorSearch;
  /** One progress poller per mission, shared by its SSE subscribers. */
  relay: EventRelay;
  /** The process's Prometheus metrics, served at /metrics. */
  metrics: Metrics;
  /** The process's tracing: a SERVER span per request; undefined when off. */
  tracing: Tracing | undefined;
  /** Tells the worker running a call that the workflow accepted its cancel, so it aborts at once. */
  toolCancels: ToolCancels;
  /** What other parts of the deployment announce (here: an owner's skills changed, for MCP sessions). */
  notifications: Pick<Notifications, 'listen'>;
  /** How often an idle SSE stream sends a keep-alive comment. */
  sseKeepAliveMs: number;
  /** The Temporal Web UI, when known: the console links each mission's run there. */
  temporalUiUrl: string | undefined;
};
