import type { Kysely } from 'kysely';
import type { Owner } from './owner.ts';
import type { Database } from './schema.ts';

/** The owner's skills: every read or change of a skill starts here, so another user's skill is never reached. */
export const ownedSkills = (db: Kysely<Database>, owner: Owner) =>
  db.selectFrom('skills').selectAll().where('tenant_id', '=', owner.tenantId).where('owner_id', '=', owner.userId);
