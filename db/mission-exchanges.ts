import { sql, type Kysely } from 'kysely';
import type { MissionResult } from '../contracts/mission.ts';
import type { Database } from './schema.ts';

/**
 * Stores a session's exchange `exchange` (from 1) at its own place in `exchanges` and marks the mission `idle`, in one
 * statement: a retried write puts the same result at the same place, never a second copy.
 */
export async function recordExchange(db: Kysely<Database>, missionId: string, exchange: number, result: MissionResult): Promise<void> {
  await db
    .updateTable('missions')
    .set({
      exchanges: sql`jsonb_set(coalesce(exchanges, '[]'::jsonb), ${sql.lit(`{${exchange - 1}}`)}::text[], ${JSON.stringify(result)}::jsonb, true)`,
      status: 'idle',
      updated_at: new Date(),
    })
    .where('id', '=', missionId)
    .execute();
}
