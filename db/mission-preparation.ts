import type { Kysely } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { Database, MissionRow, ProfileRow, SkillVersionRow } from './schema.ts';

/**
 * What prepareMission starts from: the mission row, the skill version it runs, the owner's profile, the tenant's app
 * switches and the owner's connected accounts (the last two: availability facts).
 */
export type MissionPreparation = {
  mission: MissionRow;
  /** The parts of the skill version a mission is prepared from (its settings and procedure), not the stored file. */
  version: Pick<SkillVersionRow, 'spec' | 'body'> | undefined;
  profile: ProfileRow | undefined;
  switches: Map<string, boolean>;
  accounts: Set<string>;
};

/** Reads a mission's preparation in one statement (one round trip): the row, and beside it each of the others as JSON. */
export async function readMissionPreparation(db: Kysely<Database>, missionId: string): Promise<MissionPreparation> {
  const row = await db
    .selectFrom('missions as m')
    .selectAll('m')
    .select((eb) => [
      jsonObjectFrom(
        eb
          .selectFrom('skill_versions as v')
          .select(['v.spec', 'v.body'])
          .whereRef('v.skill_id', '=', 'm.skill_id')
          .whereRef('v.version', '=', 'm.skill_version'),
      ).as('prep_version'),
      jsonObjectFrom(
        eb.selectFrom('profiles as p').selectAll('p').whereRef('p.tenant_id', '=', 'm.tenant_id').whereRef('p.user_id', '=', 'm.user_id'),
      ).as('prep_profile'),
      jsonArrayFrom(eb.selectFrom('tenant_apps as t').select(['t.app_id', 't.enabled']).whereRef('t.tenant_id', '=', 'm.tenant_id')).as(
        'prep_switches',
      ),
      jsonArrayFrom(
        eb
          .selectFrom('integrations as i')
          .select('i.provider')
          .whereRef('i.tenant_id', '=', 'm.tenant_id')
          .whereRef('i.user_id', '=', 'm.user_id')
          .where('i.status', '=', 'active'),
      ).as('prep_accounts'),
    ])
    .where('m.id', '=', missionId)
    .executeTakeFirstOrThrow();
  const { prep_version: v, prep_profile: p, prep_switches, prep_accounts, ...mission } = row;
  // JSON carries timestamps as text; every other column keeps its type.
  return {
    mission,
    version: v ?? undefined,
    profile: p ? { ...p, updated_at: new Date(p.updated_at) } : undefined,
    switches: new Map(prep_switches.map((s) => [s.app_id, s.enabled])),
    accounts: new Set(prep_accounts.map((a) => a.provider)),
  };
}
