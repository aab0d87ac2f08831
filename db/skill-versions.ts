import type { Kysely, Transaction } from 'kysely';
import type { SkillSpec } from '../contracts/skill-spec.ts';
import type { EvalSuite } from '../contracts/evals.ts';
import type { Owner } from './owner.ts';
import type { Database, SkillRow, StoredVector } from './schema.ts';
import { ownedSkills } from './owned-skills.ts';
import { putBundle } from './skill-bundles.ts';

/**
 * What a discovery chunk is: the name and description, a trigger or not_for ask, one sentence of the description, one
 * line of the body (the last two count by meaning only: see skills/discovery-score.ts).
 */
export type ChunkKind = 'identity' | 'trigger' | 'not_for' | 'description' | 'body';

/** A discovery chunk of a version, with its vector and that vector's encoder when one answered. */
export type NewChunk = { kind: ChunkKind; text: string; embedding?: StoredVector | undefined };

/** Everything one immutable version stores: the SKILL.md text, the values used, its bundle, warnings and chunks. */
export type NewVersion = {
  skillMd: string;
  sha256: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  spec: SkillSpec;
  body: string;
  bundle: { sha256: string; bytes: Buffer; files: Array<{ path: string; size: number; sha256: string }> };
  warnings: Array<{ field: string; message: string }>;
  chunks: NewChunk[];
  /** The mission that wrote the version, when a mission did. */
  missionId?: string | undefined;
  /** How it was made, when a process made it (the script factory's attempts). */
  audit?: Record<string, unknown> | undefined;
  /** The eval cases of its `evals/evals.json`, when it has one. */
  evals?: EvalSuite | undefined;
};

/** A new version that would rename its skill. */
export class SkillRenameError extends Error {
  override name = 'SkillRenameError';
}

/** Inserts one version with its bundle and chunks, inside the caller's transaction (so nothing partial remains). */
export async function insertVersionRows(trx: Transaction<Database>, skillId: string, version: number, v: NewVersion): Promise<void> {
  await putBundle(trx, v.bundle);
  await trx
    .insertInto('skill_versions')
    .values({
      skill_id: skillId,
      version,
      skill_md: v.skillMd,
      sha256: v.sha256,
      frontmatter: JSON.stringify(v.frontmatter),
      spec: JSON.stringify(v.spec),
      body: v.body,
      bundle_sha256: v.bundle.sha256,
      files: JSON.stringify(v.bundle.files),
      warnings: JSON.stringify(v.warnings),
      mission_id: v.missionId ?? null,
      audit: v.audit ? JSON.stringify(v.audit) : null,
      evals: v.evals ? JSON.stringify(v.evals) : null,
    })
    .execute();
  if (v.chunks.length === 0) return;
  await trx
    .insertInto('skill_chunks')
    .values(
      v.chunks.map((c, ordinal) => ({
        skill_id: skillId,
        version,
        ordinal,
        kind: c.kind,
        text: c.text,
        embedding: c.embedding?.vector ?? null,
        embedding_model: c.embedding?.model ?? null,
      })),
    )
    .execute();
}

/**
 * Appends the next version of the owner's skill and makes it the active version; the skill keeps its status. As a
 * `draft`, the version waits for review in `draft_version` instead and the active version keeps running.
 * Undefined when the owner has no such skill; throws SkillRenameError when the version names another skill.
 */
export async function appendVersion(
  db: Kysely<Database>,
  owner: Owner,
  id: string,
  v: NewVersion,
  opts: { draft?: boolean } = {},
): Promise<SkillRow | undefined> {
  return db.transaction().execute(async (trx) => {
    // The row lock serialises concurrent appends: each gets its own next number.
    const skill = await ownedSkills(trx, owner).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!skill) return undefined;
    if (v.name !== skill.name)
      throw new SkillRenameError(`a new version may not rename the skill: keep name '${skill.name}' (got '${v.name}')`);
    const { latest } = await trx
      .selectFrom('skill_versions')
      .select((eb) => eb.fn.max('version').as('latest'))
      .where('skill_id', '=', id)
      .executeTakeFirstOrThrow();
    const version = Number(latest ?? 0) + 1;
    await insertVersionRows(trx, id, version, v);
    return trx
      .updateTable('skills')
      .set(
        opts.draft
          ? { draft_version: version, updated_at: new Date() }
          : { active_version: version, description: v.description, updated_at: new Date() },
      )
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** A skill's newest version: its number, content hash and the mission that wrote it (if one did). */
export async function latestVersion(db: Kysely<Database>, skillId: string) {
  return db
    .selectFrom('skill_versions')
    .select(['version', 'sha256', 'mission_id'])
    .where('skill_id', '=', skillId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}
