import type { Kysely } from 'kysely';
import type { MissionEvent } from '../contracts/events.ts';
import type { Database } from './schema.ts';

/** Stores the events of a session's run that continues as new; a retried store writes nothing twice. */
export async function storeMissionEvents(db: Kysely<Database>, missionId: string, events: MissionEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('mission_events')
    .values(events.map((e) => ({ mission_id: missionId, seq: e.seq, event: JSON.stringify(e) })))
    .onConflict((oc) => oc.columns(['mission_id', 'seq']).doNothing())
    .execute();
}

/** The stored events after `afterSeq` up to `upTo`, in order. */
export async function listMissionEvents(db: Kysely<Database>, missionId: string, afterSeq: number, upTo: number): Promise<MissionEvent[]> {
  const rows = await db
    .selectFrom('mission_events')
    .select('event')
    .where('mission_id', '=', missionId)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', upTo)
    .orderBy('seq')
    .execute();
  return rows.map((r) => r.event);
}
