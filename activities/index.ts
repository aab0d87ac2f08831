import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { createDefaultSystemTools } from '../tools/system/index.ts';
import type { SystemToolRegistry } from '../tools/system/system-tool.ts';
import type { ModelClient } from './model/model-types.ts';
import { createMissionStoreActivities } from './mission-store.ts';
import { createModelActivity } from './model-activity.ts';
import { createToolActivity } from './tool-activity.ts';

/** What the mission activities need; tests pass real local services or fakes here. */
export type ActivityDeps = {
  db: Kysely<Database>;
  modelClient: ModelClient;
  registry: AppRegistry;
  /** Built-in tools every mission has; the default set when absent. */
  systemTools?: SystemToolRegistry;
  model: Pick<Config['model'], 'tiers' | 'maxTokens' | 'prices'>;
  /** The embeddings endpoint joining memory retrieval, when configured. */
  embeddings?: EmbeddingsClient | undefined;
  logger: Logger;
  env?: Record<string, string | undefined>;
};

/** All activities of a mission, built from their dependencies. */
export function createActivities(input: ActivityDeps) {
  const deps = { ...input, systemTools: input.systemTools ?? createDefaultSystemTools() };
  return {
    ...createMissionStoreActivities(deps),
    ...createModelActivity(deps),
    ...createToolActivity(deps),
  };
}

/** Dependencies as the activity factories see them: defaults filled in. */
export type ResolvedActivityDeps = ActivityDeps & { systemTools: SystemToolRegistry };

export type MissionActivities = ReturnType<typeof createActivities>;
