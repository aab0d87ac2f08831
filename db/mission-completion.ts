import type { Kysely, QueryCreator } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { feedEventInsert, type FeedEntry } from './feed.ts';
import { newMemoryRow, type NewMemoryInput } from './memories.ts';
import type { Database, MissionRow } from './schema.ts';
import { budgetReachedEvent, missionEndEvent, missionSource, owedEndpoints, webhookEventInsert } from './webhook-events.ts';

/**
 * A mission's row and the canvas ids and follow-ups of its finished embeds from turn `fromTurn`, in call order, in one
 * statement (one round trip): what its completion reads.
 */
export async function readMissionAndEmbedResults(
  db: Kysely<Database>,
  missionId: string,
  fromTurn = 0,
): Promise<{ mission: MissionRow; embeds: Array<{ canvas_ids: string[]; follow_ups: string[] }> }> {
  const { finished_embeds, ...mission } = await db
    .selectFrom('missions as m')
    .selectAll('m')
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('embeds as e')
          .select(['e.canvas_ids', 'e.follow_ups'])
          .whereRef('e.mission_id', '=', 'm.id')
          .where('e.status', '=', 'finished')
          .where('e.turn', '>=', fromTurn)
          .orderBy('e.turn')
          .orderBy('e.created_at')
          .orderBy('e.id'),
      ).as('finished_embeds'),
    )
    .where('m.id', '=', missionId)
    .executeTakeFirstOrThrow();
  return { mission, embeds: finished_embeds };
}

/**
 * A completed mission's records in one statement (one round trip, all or none): its status, result and final events, the memory
 * summarising it, the feed's completion row and the webhook deliveries of `mission.completed` (and `budget.reached` when a budget stopped it). The memory, the feed row and
 * the deliveries are keyed (source key, event key), so a retried completion writes none twice. Answers the endpoints
 * owed a delivery of the mission once it commits (`owedEndpoints`), for the wake-up.
 */
export async function recordMissionCompletion(
  db: Kysely<Database>,
  missionId: string,
  end: {
    result: string;
    finalEvents: string | null;
    finishedAt: Date;
    memory: NewMemoryInput;
    feed: FeedEntry;
    budgetReached?: boolean;
  },
): Promise<string[]> {
  const withRows = db
    .with('completed', (qc) =>
      qc
        .updateTable('missions')
        .set({
          status: 'completed',
          result: end.result,
          final_events: end.finalEvents,
          finished_at: end.finishedAt,
          updated_at: new Date(),
        })
        .where('id', '=', missionId),
    )
    .with('memory', (qc) =>
      qc
        .insertInto('memories')
        .values(newMemoryRow(end.memory))
        .onConflict((oc) => oc.column('source_key').doNothing()),
    )
    .with('feed_row', (qc) => feedEventInsert(qc as unknown as QueryCreator<Database>, end.feed))
    .with('deliveries', (qc) =>
      webhookEventInsert(qc as unknown as QueryCreator<Database>, missionSource(missionId), [
        missionEndEvent(missionId, 'completed'),
        ...(end.budgetReached ? [budgetReachedEvent(missionId)] : []),
      ]).returning('webhook_id'),
    );
  return owedEndpoints(withRows, missionId);
}

/**
 * A mission paused at its budget after turn `turn`: `running` → `paused` (a slot freed) and its `budget.reached`
 * deliveries, in one statement; keyed by the turn, so a retried pause delivers nothing twice. Answers the endpoints
 * owed a delivery of the mission once it commits (`owedEndpoints`), for the wake-up.
 */
export async function recordBudgetPause(db: Kysely<Database>, missionId: string, turn: number): Promise<string[]> {
  const withRows = db
    .with('deliveries', (qc) =>
      webhookEventInsert(qc as unknown as QueryCreator<Database>, missionSource(missionId), [
        budgetReachedEvent(missionId, turn),
      ]).returning('webhook_id'),
    )
    .with('paused', (qc) =>
      qc
        .updateTable('missions')
        .set({ status: 'paused', updated_at: new Date() })
        .where('id', '=', missionId)
        .where('status', '=', 'running'),
    );
  return owedEndpoints(withRows, missionId);
}
