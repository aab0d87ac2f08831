import { createApprovalActivity } from './approval-activity.ts';
import { outlastDatabaseOutages } from './database-outage.ts';
import type { ActivityDeps } from './deps.ts';
import { createFactoryActivities } from './factory-activities.ts';
import { createMissionStoreActivities } from './mission-store.ts';
import { createModelActivity } from './model-activity.ts';
import { createToolActivity } from './tool-activity.ts';

export type { ActivityDeps } from './deps.ts';

/** All activities of a mission, built from their dependencies; each outlives a database outage (database-outage.ts). */
export function createActivities(deps: ActivityDeps) {
  return outlastDatabaseOutages(
    {
      ...createMissionStoreActivities(deps),
      ...createModelActivity(deps),
      ...createToolActivity(deps),
      ...createFactoryActivities(deps),
      ...createApprovalActivity(deps),
    },
    { maxWaitSeconds: deps.databaseOutageWaitSeconds, logger: deps.logger },
  );
}

export type MissionActivities = ReturnType<typeof createActivities>;
