import { createApprovalActivity } from './approval-activity.ts';
import { outlastDatabaseOutages } from './database-outage.ts';
import type { MissionActivities } from '../contracts/activities.ts';
import type { ActivityDeps } from './deps.ts';
import { createFactoryActivities } from './factory-activities.ts';
import { createMissionStoreActivities } from './mission-store.ts';
import { createSessionStoreActivities } from './session-store.ts';
import { createModelActivity } from './model-activity.ts';
import { createCompactionActivity } from './context-compaction.ts';
import { createToolActivity } from './tool-activity.ts';
import { createMissionFactsCache } from './mission-facts.ts';
import { createTranscriptCache } from './transcript-cache.ts';

export type { ActivityDeps } from './deps.ts';

/** All activities of a mission, built from their dependencies; each outlives a database outage (database-outage.ts). */
export function createActivities(deps: ActivityDeps): MissionActivities {
  // The frozen facts of each mission (owner, prompt, catalog), read once per worker instead of on every call.
  const facts = createMissionFactsCache(deps.db);
  // What this worker wrote to each mission's transcript, so its next model call need not read it back.
  const transcripts = createTranscriptCache();
  return outlastDatabaseOutages(
    {
      ...createMissionStoreActivities(deps, { facts, transcripts }),
      ...createSessionStoreActivities(deps),
      ...createModelActivity(deps, facts, transcripts),
      ...createCompactionActivity(deps),
      ...createToolActivity(deps, facts, transcripts),
      ...createFactoryActivities(deps),
      ...createApprovalActivity(deps),
    },
    { maxWaitSeconds: deps.databaseOutageWaitSeconds, logger: deps.logger },
  );
}

export type { MissionActivities };
