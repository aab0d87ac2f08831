import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { ModelClient } from '../model/model-types.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import type { SystemToolRegistry } from '../tools/system/system-tool.ts';

/** What the mission activities need, built once by the worker's composition root; tests pass real local services. */
export type ActivityDeps = {
  db: Kysely<Database>;
  modelClient: ModelClient;
  registry: AppRegistry;
  /** Built-in tools every mission has. */
  systemTools: SystemToolRegistry;
  model: Pick<Config['model'], 'tiers' | 'maxTokens' | 'prices'>;
  /** The embeddings endpoint joining memory retrieval, when configured. */
  embeddings: EmbeddingsClient | undefined;
  logger: Logger;
  /** The environment HTTP tool headers may reference (`${NAME}`). */
  env: Record<string, string | undefined>;
  /** How long an activity waits out an unreachable database (DATABASE_OUTAGE_WAIT_SECONDS). */
  databaseOutageWaitSeconds: number;
};
