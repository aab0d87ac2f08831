import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { MissionResult } from '../contracts/mission.ts';
import { feedEventInsert, type FeedEntry } from './feed.ts';
import { newMemoryRow, type NewMemoryInput } from './memories.ts';
import type { Database } from './schema.ts';
import { missionLinks, missionSource, owedEndpoints, webhookEventInsert } from './webhook-events.ts';

/**
 * Stores a session's exchange `exchange` (from 1) at its own place in `exchanges` and marks the mission `idle`, in one
 * statement with the exchange's completion memory, its feed row and its `mission.idle` webhook deliveries: a retried
 * write puts the same result at the same place, never a second copy, and writes no memory, row or delivery twice (each
 * is keyed by the exchange). Answers the endpoints owed a delivery of the mission once it commits (`owedEndpoints`),
 * for the wake-up.
 */
export async function recordExchange(
  db: Kysely<Database>,
  missionId: string,
  exchange: number,
  result: MissionResult,
  records: { memory: NewMemoryInput; feed: FeedEntry },
): Promise<string[]> {
  const withRows = db
    .with('memory', (qc) =>
      qc
        .insertInto('memories')
        .values(newMemoryRow(records.memory))
        .onConflict((oc) => oc.column('source_key').doNothing()),
    )
    .with('feed_row', (qc) => feedEventInsert(qc as unknown as QueryCreator<Database>, records.feed))
    .with('deliveries', (qc) =>
      webhookEventInsert(qc as unknown as QueryCreator<Database>, missionSource(missionId), [
        {
          type: 'mission.idle',
          eventKey: `${missionId}/idle/${exchange}`,
          data: { missionId, status: 'idle', exchange, links: missionLinks(missionId) },
        },
      ]).returning('webhook_id'),
    )
    .with('idle', (qc) =>
      qc
        .updateTable('missions')
        .set({
          exchanges: sql`jsonb_set(coalesce(exchanges, '[]'::jsonb), ${sql.lit(`{${exchange - 1}}`)}::text[], ${JSON.stringify(result)}::jsonb, true)`,
          status: 'idle',
          updated_at: new Date(),
        })
        .where('id', '=', missionId),
    );
  return owedEndpoints(withRows, missionId);
}
