import { sql, type Kysely } from 'kysely';
import type { Database, ProvenanceEntry, SkillRow, SkillVersionRow } from './schema.ts';

/** The provenance entry of one skill version as a mission used it: the exact bytes, by the bundle's sha256. */
export function provenanceEntry(
  role: ProvenanceEntry['role'],
  skill: Pick<SkillRow, 'id' | 'name'>,
  version: Pick<SkillVersionRow, 'version' | 'bundle_sha256'>,
): ProvenanceEntry {
  return { role, skillId: skill.id, name: skill.name, version: version.version, bundleSha256: version.bundle_sha256 };
}

/**
 * Adds a skill version to what the mission used, once: a second load of the same version in the same role, or a
 * retried tool call, adds nothing (one atomic update, so parallel calls cannot lose each other's entries).
 */
export async function recordSkillUse(db: Kysely<Database>, missionId: string, entry: ProvenanceEntry): Promise<void> {
  const one = JSON.stringify([entry]);
  await sql`
    update missions set provenance = coalesce(provenance, '[]'::jsonb) || ${one}::jsonb
    where id = ${missionId} and not coalesce(provenance, '[]'::jsonb) @> ${one}::jsonb`.execute(db);
}
