import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import type { ModelClient } from './model/model-types.ts';
import { createMissionStoreActivities } from './mission-store.ts';
import { createModelActivity } from './model-activity.ts';
import { createToolActivity } from './tool-activity.ts';

/** What the mission activities need; tests pass real local services or fakes here. */
export type ActivityDeps = {
  db: Kysely<Database>;
  modelClient: ModelClient;
  registry: AppRegistry;
  model: Pick<Config['model'], 'tiers' | 'maxTokens'>;
  logger: Logger;
  env?: Record<string, string | undefined>;
};

/** All activities of a mission, built from their dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMissionStoreActivities(deps),
    ...createModelActivity(deps),
    ...createToolActivity(deps),
  };
}

export type MissionActivities = ReturnType<typeof createActivities>;
