import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Owner } from './missions.ts';
import type { Database, SkillRow, SkillVersionRow } from './schema.ts';

/** What the repository needs of a parsed SKILL.md. */
export type SkillContent = { name: string; description: string; frontmatter: Record<string, unknown>; body: string };

export class SkillExistsError extends Error {
  override name = 'SkillExistsError';
}

/** Stores a new skill with its first immutable version; the SKILL.md bytes are kept verbatim. */
export async function createSkill(db: Kysely<Database>, owner: Owner, skillMd: string, content: SkillContent): Promise<SkillRow> {
  return db.transaction().execute(async (trx) => {
    const id = randomUUID();
    const row = await trx
      .insertInto('skills')
      .values({
        id,
        tenant_id: owner.tenantId,
        owner_id: owner.userId,
        name: content.name,
        description: content.description,
        active_version: 1,
        status: 'active',
      })
      .onConflict((oc) => oc.constraint('skills_owner_name').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new SkillExistsError(`a skill named ${content.name} already exists`);
    await trx
      .insertInto('skill_versions')
      .values({
        skill_id: id,
        version: 1,
        skill_md: skillMd,
        sha256: createHash('sha256').update(skillMd).digest('hex'),
        frontmatter: JSON.stringify(content.frontmatter),
        body: content.body,
      })
      .execute();
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
  const skill = await db
    .selectFrom('skills')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', owner.tenantId)
    .where('owner_id', '=', owner.userId)
    .executeTakeFirst();
  if (!skill) return undefined;
  const v = await getSkillVersion(db, skill.id, version ?? skill.active_version);
  return v ? { skill, version: v } : undefined;
}

/** The owner's skill by name (missions name skills), with its active version. */
export async function findOwnedSkillByName(db: Kysely<Database>, owner: Owner, name: string) {
  const skill = await db
    .selectFrom('skills')
    .selectAll()
    .where('name', '=', name)
    .where('tenant_id', '=', owner.tenantId)
    .where('owner_id', '=', owner.userId)
    .executeTakeFirst();
  return skill ? findOwnedSkill(db, owner, skill.id) : undefined;
}

export async function getSkillVersion(db: Kysely<Database>, skillId: string, version: number): Promise<SkillVersionRow | undefined> {
  return db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('version', '=', version).executeTakeFirst();
}

export async function listOwnedSkills(db: Kysely<Database>, owner: Owner): Promise<SkillRow[]> {
  return db
    .selectFrom('skills')
    .selectAll()
    .where('tenant_id', '=', owner.tenantId)
    .where('owner_id', '=', owner.userId)
    .orderBy('name')
    .execute();
}
