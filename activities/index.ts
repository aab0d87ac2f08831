import type { ActivityDeps } from './deps.ts';
import { createMissionStoreActivities } from './mission-store.ts';
import { createModelActivity } from './model-activity.ts';
import { createToolActivity } from './tool-activity.ts';

export type { ActivityDeps } from './deps.ts';

/** All activities of a mission, built from their dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMissionStoreActivities(deps),
    ...createModelActivity(deps),
    ...createToolActivity(deps),
  };
}

export type MissionActivities = ReturnType<typeof createActivities>;
