import type { Kysely } from 'kysely';
import type { ValidateFunction } from 'ajv';
import { compileOutputSchema } from '../lib/output-schema.ts';
import { getMissionFacts } from '../db/missions.ts';
import type { Owner } from '../db/owner.ts';
import type { CatalogEntry, Database } from '../db/schema.ts';

/**
 * What a mission's model and tool calls read on every call: the owner and catalog never change once prepareMission
 * wrote them; the system prompt changes only when a session's exchange starts (its user context read again).
 */
export type MissionFacts = {
  owner: Owner;
  systemPrompt: string;
  catalog: CatalogEntry[];
  /** The mission's output schema, and its validator compiled once per worker (absent: the answer is free text). */
  output?: { schema: Record<string, unknown>; validate: ValidateFunction };
};

/**
 * Per-worker memory of mission facts, bounded: a model or tool call reads them once per mission (and a session's
 * model calls once per exchange, `exchange` from 1), not once per call.
 */
export type MissionFactsCache = { get(missionId: string, exchange?: number): Promise<MissionFacts> };

export function createMissionFactsCache(db: Kysely<Database>, maxMissions = 2_000): MissionFactsCache {
  const facts = new Map<string, MissionFacts & { exchange: number }>();
  return {
    async get(missionId, exchange = 1) {
      const known = facts.get(missionId);
      // Read for an earlier exchange: its system prompt is out of date (a tool call, asking for none, takes any).
      if (known && known.exchange >= exchange) {
        // Most recently used last: the first key is the one to drop.
        facts.delete(missionId);
        facts.set(missionId, known);
        return known;
      }
      const row = await getMissionFacts(db, missionId);
      const fresh = {
        exchange,
        owner: { tenantId: row.tenant_id, userId: row.user_id },
        systemPrompt: row.system_prompt ?? '',
        catalog: row.catalog ?? [],
        ...(row.output_schema ? { output: { schema: row.output_schema, validate: compileOutputSchema(row.output_schema) } } : {}),
      };
      // Frozen only once prepareMission wrote the catalog: before that there is nothing to keep.
      if (row.catalog !== null) {
        facts.set(missionId, fresh);
        if (facts.size > maxMissions) facts.delete(facts.keys().next().value!);
      }
      return fresh;
    },
  };
}
