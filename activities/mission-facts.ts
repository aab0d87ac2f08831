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

/** The columns the facts are made of, as `getMissionFacts` reads them. */
type FactsRow = Awaited<ReturnType<typeof getMissionFacts>>;

/**
 * Per-worker memory of mission facts, bounded: a model or tool call reads them once per mission (and a session's
 * model calls once per exchange, `exchange` from 1), not once per call. prepareMission leaves what it wrote under its
 * transcript stamp (`seed`): only a call passing that stamp takes it (the plan the workflow acted on is that attempt's),
 * which confirms it for every later call; any other reads Postgres.
 */
export type MissionFactsCache = {
  get(missionId: string, exchange?: number, stamp?: string): Promise<MissionFacts>;
  seed(missionId: string, row: FactsRow, stamp: string): void;
};

export function createMissionFactsCache(db: Kysely<Database>, maxMissions = 2_000): MissionFactsCache {
  const facts = new Map<string, MissionFacts & { exchange: number; seeded?: string }>();
  const keep = (missionId: string, entry: MissionFacts & { exchange: number; seeded?: string }) => {
    facts.set(missionId, entry);
    if (facts.size > maxMissions) facts.delete(facts.keys().next().value!);
  };
  const factsOf = (row: FactsRow) => ({
    owner: { tenantId: row.tenant_id, userId: row.user_id },
    systemPrompt: row.system_prompt ?? '',
    catalog: row.catalog ?? [],
    ...(row.output_schema ? { output: { schema: row.output_schema, validate: compileOutputSchema(row.output_schema) } } : {}),
  });
  return {
    seed(missionId, row, stamp) {
      keep(missionId, { ...factsOf(row), exchange: 1, seeded: stamp });
    },
    async get(missionId, exchange = 1, stamp) {
      const seeded = facts.get(missionId);
      if (seeded?.seeded !== undefined) {
        if (seeded.seeded === stamp) delete seeded.seeded;
        else facts.delete(missionId);
      }
      const known = facts.get(missionId);
      // Read for an earlier exchange: its system prompt is out of date (a tool call, asking for none, takes any).
      if (known && known.exchange >= exchange) {
        // Most recently used last: the first key is the one to drop.
        facts.delete(missionId);
        facts.set(missionId, known);
        return known;
      }
      const row = await getMissionFacts(db, missionId);
      const fresh = { exchange, ...factsOf(row) };
      // Frozen only once prepareMission wrote the catalog: before that there is nothing to keep.
      if (row.catalog !== null) keep(missionId, fresh);
      return fresh;
    },
  };
}
