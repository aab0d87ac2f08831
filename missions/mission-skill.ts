import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Owner } from '../db/owner.ts';
import type { Database } from '../db/schema.ts';
import { findOwnedSkill, findOwnedSkillByName, type SkillRead } from '../db/skills.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import { discoverSkills } from '../skills/discover-skills.ts';
import { NotFoundError, UnprocessableError } from '../contracts/errors.ts';

/** The skill name that asks discovery to choose: the top-ranked active skill for the objective. */
export const AUTO_SKILL = 'auto';

/**
 * The skill and active version a mission runs: the one named, or for `skill: "auto"` the top-ranked active skill for
 * the objective. 404 for a skill the caller does not own; 422 for one that is quarantined or a draft (not in use).
 */
export async function resolveMissionSkill(
  deps: {
    db: Kysely<Database>;
    config: Pick<Config, 'skills'>;
    embeddings?: EmbeddingsClient | undefined;
    vectors: VectorSearch;
    logger?: Logger;
  },
  owner: Owner,
  req: { skill: string; objective: string; skillRead?: SkillRead | undefined },
) {
  let found;
  if (req.skill === AUTO_SKILL) {
    const { items } = await discoverSkills(
      { db: deps.db, tuning: deps.config.skills.discovery, embeddings: deps.embeddings, vectors: deps.vectors, logger: deps.logger },
      owner,
      req.objective,
      1,
    );
    const top = items[0];
    if (!top) {
      throw new UnprocessableError('no active skill matches the objective: name the skill to run', {
        fields: [{ field: 'skill', message: 'auto found no matching active skill' }],
      });
    }
    found = await findOwnedSkill(deps.db, owner, top.id);
  } else {
    // Read with the caller's key when the start came through `POST /missions`.
    found = req.skillRead?.name === req.skill ? req.skillRead.found : await findOwnedSkillByName(deps.db, owner, req.skill);
  }
  return runnableSkill(found, req.skill);
}

/** The skill found by name, if it can run: 404 when the caller owns none by that name, 422 when it is not active. */
export function runnableSkill<T extends { skill: { name: string; status: string; id: string } }>(
  found: T | undefined,
  requested: string,
): T {
  if (!found) throw new NotFoundError(`skill ${requested} not found`);
  const { name, status, id } = found.skill;
  if (status === 'quarantined') {
    throw new UnprocessableError(
      `skill ${name} is quarantined: an imported skill runs only after a key with skill.review activates it (POST /api/v1/skills/${id}/activate)`,
      {
        fields: [{ field: 'skill', message: 'quarantined' }],
      },
    );
  }
  if (status !== 'active') {
    throw new UnprocessableError(
      `skill ${name} is ${status}, not active: activate it (POST /api/v1/skills/${id}/activate) to run missions`,
      {
        fields: [{ field: 'skill', message: status }],
      },
    );
  }
  return found;
}

/** The version an eval run's mission runs: the owner's skill by id at that version, in review or in use. */
export async function evalMissionSkill(deps: { db: Kysely<Database> }, owner: Owner, which: { skillId: string; version: number }) {
  const found = await findOwnedSkill(deps.db, owner, which.skillId, which.version);
  if (!found) throw new NotFoundError(`skill ${which.skillId} has no version ${which.version}`);
  return found;
}
