import type { Kysely } from 'kysely';
import type { Owner } from '../db/owner.ts';
import type { Database } from '../db/schema.ts';
import { matchSkillChunks } from '../db/skill-discovery.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { discoveryChunks } from './discovery-chunks.ts';
import { chunkScore } from './discovery-score.ts';

/**
 * The identity score (discovery's chunk score of name + description) from which an existing skill is reported as a
 * near-duplicate of a new one. Measured on test/fixtures/near-duplicates.json with
 * `node bench/near-duplicates.ts`: 0.526 for the lowest-scoring duplicate, 0.215 for the highest-scoring distinct skill,
 * and this is the midpoint of that gap (in-sample: the set is small and was not split).
 */
export const NEAR_DUPLICATE_MIN_SCORE = 0.37;

/** An existing skill of the owner whose name and description come close to a new one's. */
export type NearDuplicate = { id: string; name: string; status: string; score: number };

/**
 * The owner's skills (any status) ranked by how close their identity (name + description) comes to a new skill's,
 * closest first, with discovery's chunk score; `excludeId` leaves out the skill being revised.
 */
export async function rankByIdentity(
  deps: { db: Kysely<Database>; embeddings?: EmbeddingsClient | undefined },
  owner: Owner,
  skill: { name: string; description: string },
  excludeId?: string,
): Promise<NearDuplicate[]> {
  const identity = discoveryChunks({ ...skill, spec: { triggers: [], notFor: [] } })[0]!.text;
  const [matches, embedding] = await Promise.all([
    matchSkillChunks(deps.db, owner, identity, deps.embeddings?.model, true),
    // Without embeddings (or when the endpoint fails) the check runs on keywords and trigrams, as discovery does.
    deps.embeddings?.embed([identity]).then(
      (v) => v[0],
      () => undefined,
    ),
  ]);
  return matches
    .filter((m) => m.kind === 'identity' && m.skillId !== excludeId)
    .map((m) => ({ id: m.skillId, name: m.name, status: m.status, score: chunkScore(m, embedding) }))
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
}

/** The closest existing skill when it scores at or above the threshold: what a new skill's author is warned about. */
export async function closestDuplicate(
  deps: { db: Kysely<Database>; embeddings?: EmbeddingsClient | undefined },
  owner: Owner,
  skill: { name: string; description: string },
  excludeId?: string,
): Promise<NearDuplicate | undefined> {
  const [closest] = await rankByIdentity(deps, owner, skill, excludeId);
  return closest && closest.score >= NEAR_DUPLICATE_MIN_SCORE ? closest : undefined;
}
