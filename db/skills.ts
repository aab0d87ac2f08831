import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import type { Owner } from './owner.ts';
import { ownedSkills } from './owned-skills.ts';
import type { ApiKeyRow, Database, ImportAudit, SkillRow, SkillVersionRow } from './schema.ts';
import { hashApiKey } from './api-keys.ts';
import { insertVersionRows, type NewVersion } from './skill-versions.ts';

export type SkillStatus = 'draft' | 'active' | 'quarantined';
export type SkillSourceKind = 'authored' | 'imported' | 'promoted';

/** A new skill: its first version, where it came from, its starting status and (for imports) the audit record. */
export type NewSkill = NewVersion & { source: SkillSourceKind; status: SkillStatus; importAudit?: ImportAudit };

export class SkillExistsError extends Error {
  override name = 'SkillExistsError';
}

/** Stores a new skill with its first immutable version, bundle and chunks, all or nothing. */
export async function createSkill(db: Kysely<Database>, owner: Owner, skill: NewSkill): Promise<SkillRow> {
  return db.transaction().execute(async (trx) => {
    const id = randomUUID();
    const row = await trx
      .insertInto('skills')
      .values({
        id,
        tenant_id: owner.tenantId,
        owner_id: owner.userId,
        name: skill.name,
        description: skill.description,
        active_version: 1,
        status: skill.status,
        source: skill.source,
        import_audit: skill.importAudit ? JSON.stringify(skill.importAudit) : null,
        mission_id: skill.missionId ?? null,
      })
      .onConflict((oc) => oc.constraint('skills_owner_name').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new SkillExistsError(`a skill named ${skill.name} already exists`);
    await insertVersionRows(trx, id, 1, skill);
    return row;
  });
}

/** The owner's skill by id, with one version (the active one unless asked). */
export async function findOwnedSkill(
  db: Kysely<Database>,
  owner: Owner,
  id: string,
  version?: number,
): Promise<{ skill: SkillRow; version: SkillVersionRow } | undefined> {
  return withVersion(db, owner, 'id', id, version);
}

/** The owner's skill by name (missions name skills), with its active version. */
export async function findOwnedSkillByName(db: Kysely<Database>, owner: Owner, name: string) {
  return withVersion(db, owner, 'name', name);
}

/** A skill by name as a mission start read it: the owner's skill with its active version, or none. */
export type SkillRead = { name: string; found: { skill: SkillRow; version: SkillVersionRow } | undefined };

/**
 * The live (not revoked) key row for a presented bearer and, in the same statement (one round trip), its owner's skill
 * `skillName` with the active version, as `findOwnedSkillByName` reads it: what `POST /missions` needs first. Undefined
 * for an unknown or revoked key, whatever the skill.
 */
export async function findActiveApiKeyWithSkill(
  db: Kysely<Database>,
  key: string,
  skillName: string,
): Promise<{ key: ApiKeyRow; skill: SkillRead } | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .selectAll('k')
    .select((eb) =>
      jsonObjectFrom(
        eb
          .selectFrom('skills as s')
          .selectAll('s')
          .select((v) =>
            jsonObjectFrom(
              v
                .selectFrom('skill_versions as v')
                .selectAll('v')
                .whereRef('v.skill_id', '=', 's.id')
                .whereRef('v.version', '=', 's.active_version'),
            ).as('found_version'),
          )
          // The key's owner, as `ownedSkills` filters.
          .whereRef('s.tenant_id', '=', 'k.tenant_id')
          .whereRef('s.owner_id', '=', 'k.user_id')
          .where('s.name', '=', skillName),
      ).as('named_skill'),
    )
    .where('k.key_hash', '=', hashApiKey(key))
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { named_skill: named, ...keyRow } = row;
  if (!named?.found_version) return { key: keyRow, skill: { name: skillName, found: undefined } };
  // JSON carries the timestamps as text; every other column keeps its type.
  const { found_version: v, ...skill } = named;
  return {
    key: keyRow,
    skill: {
      name: skillName,
      found: {
        skill: { ...skill, created_at: new Date(skill.created_at), updated_at: new Date(skill.updated_at) },
        version: { ...v, created_at: new Date(v.created_at) },
      },
    },
  };
}

/** The skill and its version in one statement (one round trip): the version as a JSON object beside the row. */
async function withVersion(
  db: Kysely<Database>,
  owner: Owner,
  by: 'id' | 'name',
  value: string,
  version?: number,
): Promise<{ skill: SkillRow; version: SkillVersionRow } | undefined> {
  const row = await ownedSkills(db, owner)
    .select((eb) =>
      jsonObjectFrom(
        eb
          .selectFrom('skill_versions as v')
          .selectAll('v')
          .whereRef('v.skill_id', '=', 'skills.id')
          .where((w) => w('v.version', '=', version ?? w.ref('skills.active_version'))),
      ).as('found_version'),
    )
    .where(`skills.${by}`, '=', value)
    .executeTakeFirst();
  if (!row?.found_version) return undefined;
  const { found_version: v, ...skill } = row;
  // JSON carries the timestamp as text; every other column keeps its type.
  return { skill, version: { ...v, created_at: new Date(v.created_at) } };
}

export async function getSkillVersion(db: Kysely<Database>, skillId: string, version: number): Promise<SkillVersionRow | undefined> {
  return db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst();
}

/** The version numbers of a skill, oldest first. */
export async function listVersionNumbers(db: Kysely<Database>, skillId: string): Promise<number[]> {
  const rows = await db.selectFrom('skill_versions').select('version').where('skill_id', '=', skillId).orderBy('version').execute();
  return rows.map((r) => r.version);
}

export async function listOwnedSkills(db: Kysely<Database>, owner: Owner, status?: SkillStatus): Promise<SkillRow[]> {
  let q = ownedSkills(db, owner);
  if (status) q = q.where('status', '=', status);
  return q.orderBy('name').execute();
}

/**
 * Moves the owner's skill to `to` when its status is one of `from`; nothing else about it changes (retiring deletes
 * nothing). Undefined when the owner has no such skill; `{moved: false}` when it is in another status.
 */
export async function changeSkillStatus(
  db: Kysely<Database>,
  owner: Owner,
  id: string,
  from: SkillStatus[],
  to: SkillStatus,
): Promise<{ skill: SkillRow; moved: boolean } | undefined> {
  const moved = await db
    .updateTable('skills')
    .set({ status: to, updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', owner.tenantId)
    .where('owner_id', '=', owner.userId)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
  if (moved) return { skill: moved, moved: true };
  const found = await findOwnedSkill(db, owner, id);
  return found ? { skill: found.skill, moved: false } : undefined;
}

/**
 * Puts the owner's skill's draft version (a script factory's, awaiting review) in use: it becomes the active version
 * and the skill active. Undefined when the owner has no such skill or it holds no draft version.
 */
export async function activateDraftVersion(db: Kysely<Database>, owner: Owner, id: string): Promise<SkillRow | undefined> {
  return ownedUpdate(db, owner, id)
    .set((eb) => ({ active_version: eb.ref('draft_version').$notNull(), draft_version: null, status: 'active', updated_at: new Date() }))
    .where('draft_version', 'is not', null)
    .returningAll()
    .executeTakeFirst();
}

const ownedUpdate = (db: Kysely<Database>, owner: Owner, id: string) =>
  db.updateTable('skills').where('id', '=', id).where('tenant_id', '=', owner.tenantId).where('owner_id', '=', owner.userId);
