import { sql, type Kysely } from 'kysely';
import type { MissionResult } from '../contracts/mission.ts';
import type { Database } from './schema.ts';
import { missionLinks, missionSource, webhookEventInsert } from './webhook-events.ts';

/**
 * Stores a session's exchange `exchange` (from 1) at its own place in `exchanges` and marks the mission `idle`, in one
 * statement with its `mission.idle` webhook deliveries: a retried write puts the same result at the same place, never a
 * second copy, and enqueues no delivery twice.
 */
export async function recordExchange(db: Kysely<Database>, missionId: string, exchange: number, result: MissionResult): Promise<void> {
  await db
    .with('deliveries', (qc) =>
      webhookEventInsert(qc, missionSource(missionId), [
        {
          type: 'mission.idle',
          eventKey: `${missionId}/idle/${exchange}`,
          data: { missionId, status: 'idle', exchange, links: missionLinks(missionId) },
        },
      ]),
    )
    .updateTable('missions')
    .set({
      exchanges: sql`jsonb_set(coalesce(exchanges, '[]'::jsonb), ${sql.lit(`{${exchange - 1}}`)}::text[], ${JSON.stringify(result)}::jsonb, true)`,
      status: 'idle',
      updated_at: new Date(),
    })
    .where('id', '=', missionId)
    .execute();
}
