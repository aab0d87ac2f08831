import type { Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import * as initial from './migrations/2026-11-30-001-initial.ts';
import * as extensions from './migrations/2026-11-30-002-extensions.ts';
import * as skillsRegistry from './migrations/2026-11-30-003-skills-registry.ts';
import * as context from './migrations/2026-11-30-004-context.ts';
import * as toolCallsByTurn from './migrations/2026-11-30-005-tool-calls-by-turn.ts';
import * as feed from './migrations/2026-12-01-006-feed.ts';
import * as skillSpec from './migrations/2026-12-01-007-skill-spec.ts';
import * as apiKeyLastUsed from './migrations/2026-12-01-008-api-key-last-used.ts';
import * as appsSecrets from './migrations/2026-12-01-010-apps-secrets.ts';
import * as skillGrowth from './migrations/2026-12-01-014-skill-growth.ts';
import * as retry from './migrations/2026-12-01-015-retry.ts';
import * as embeds from './migrations/2026-12-01-016-embeds.ts';
import * as toolApprovals from './migrations/2026-12-01-017-tool-approvals.ts';
import * as mcpListings from './migrations/2026-12-01-018-mcp-listings.ts';
import * as admission from './migrations/2026-12-01-020-admission.ts';
import * as scriptFactory from './migrations/2026-12-01-021-script-factory.ts';
import * as finalEvents from './migrations/2026-12-01-022-final-events.ts';
import * as embeddingModel from './migrations/2026-12-03-023-embedding-model.ts';
import * as contextMemories from './migrations/2026-12-03-024-context-memories.ts';
import * as skillChunkKinds from './migrations/2026-12-03-025-skill-chunk-kinds.ts';
import * as sessions from './migrations/2026-12-03-026-sessions.ts';
import * as schedules from './migrations/2026-12-03-027-schedules.ts';
import * as contextCompactions from './migrations/2026-12-03-029-context-compactions.ts';
import * as schedulePaused from './migrations/2026-12-03-030-schedule-paused.ts';
import * as sessionEvents from './migrations/2026-12-03-031-session-events.ts';
import * as webhooks from './migrations/2026-12-03-032-webhooks.ts';
import * as budgetPause from './migrations/2026-12-03-033-budget-pause.ts';
import * as modelCallProvider from './migrations/2026-12-03-034-model-call-provider.ts';
import * as evals from './migrations/2026-12-03-035-evals.ts';
import * as delegation from './migrations/2026-12-03-036-delegation.ts';
import * as skillChanges from './migrations/2026-12-03-037-skill-changes.ts';
import * as missionFiles from './migrations/2026-12-04-038-mission-files.ts';
import * as providerLimits from './migrations/2026-12-04-039-provider-limits.ts';
import * as outputSchema from './migrations/2026-12-04-040-output-schema.ts';
import * as vectorIndexes from './migrations/2026-12-04-041-vector-indexes.ts';
import * as attemptScheduled from './migrations/2026-12-04-042-attempt-scheduled.ts';
import * as gradingCost from './migrations/2026-12-04-043-grading-cost.ts';

// Listed explicitly (not read from disk) so the order is reviewable and bundling-friendly.
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-30-001-initial': initial,
  '2026-11-30-002-extensions': extensions,
  '2026-11-30-003-skills-registry': skillsRegistry,
  '2026-11-30-004-context': context,
  '2026-11-30-005-tool-calls-by-turn': toolCallsByTurn,
  '2026-12-01-006-feed': feed,
  '2026-12-01-007-skill-spec': skillSpec,
  '2026-12-01-008-api-key-last-used': apiKeyLastUsed,
  '2026-12-01-010-apps-secrets': appsSecrets,
  '2026-12-01-014-skill-growth': skillGrowth,
  '2026-12-01-015-retry': retry,
  '2026-12-01-016-embeds': embeds,
  '2026-12-01-017-tool-approvals': toolApprovals,
  '2026-12-01-018-mcp-listings': mcpListings,
  '2026-12-01-020-admission': admission,
  '2026-12-01-021-script-factory': scriptFactory,
  '2026-12-01-022-final-events': finalEvents,
  '2026-12-03-023-embedding-model': embeddingModel,
  '2026-12-03-024-context-memories': contextMemories,
  '2026-12-03-025-skill-chunk-kinds': skillChunkKinds,
  '2026-12-03-026-sessions': sessions,
  '2026-12-03-027-schedules': schedules,
  '2026-12-03-029-context-compactions': contextCompactions,
  '2026-12-03-030-schedule-paused': schedulePaused,
  '2026-12-03-031-session-events': sessionEvents,
  '2026-12-03-032-webhooks': webhooks,
  '2026-12-03-033-budget-pause': budgetPause,
  '2026-12-03-034-model-call-provider': modelCallProvider,
  '2026-12-03-035-evals': evals,
  '2026-12-03-036-delegation': delegation,
  '2026-12-03-037-skill-changes': skillChanges,
  '2026-12-04-038-mission-files': missionFiles,
  '2026-12-04-039-provider-limits': providerLimits,
  '2026-12-04-040-output-schema': outputSchema,
  '2026-12-04-041-vector-indexes': vectorIndexes,
  '2026-12-04-042-attempt-scheduled': attemptScheduled,
  '2026-12-04-043-grading-cost': gradingCost,
};

/** A Kysely Migrator over this project's migrations. */
export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
}

/** Brings the schema to the latest migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${String((error as Error).message ?? error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
