import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

export type Compaction = { uptoSeq: number; summary: string; foldedMessages: number };

/** The compaction in use: the latest cut of the mission's transcript, if any. */
export async function latestCompaction(db: Kysely<Database>, missionId: string): Promise<Compaction | undefined> {
  const row = await db
    .selectFrom('context_compactions')
    .select(['upto_seq', 'summary', 'folded_messages'])
    .where('mission_id', '=', missionId)
    .orderBy('upto_seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { uptoSeq: row.upto_seq, summary: row.summary, foldedMessages: row.folded_messages } : undefined;
}

/** The compaction stored for this cut, if an earlier attempt already wrote it. */
export async function findCompaction(db: Kysely<Database>, missionId: string, uptoSeq: number): Promise<Compaction | undefined> {
  const row = await db
    .selectFrom('context_compactions')
    .select(['upto_seq', 'summary', 'folded_messages'])
    .where('mission_id', '=', missionId)
    .where('upto_seq', '=', uptoSeq)
    .executeTakeFirst();
  return row ? { uptoSeq: row.upto_seq, summary: row.summary, foldedMessages: row.folded_messages } : undefined;
}

/** Stores a cut's summary once: an attempt that lost a race keeps the summary stored first, and returns it. */
export async function putCompaction(db: Kysely<Database>, missionId: string, c: Compaction): Promise<Compaction> {
  await db
    .insertInto('context_compactions')
    .values({ mission_id: missionId, upto_seq: c.uptoSeq, summary: c.summary, folded_messages: c.foldedMessages })
    .onConflict((oc) => oc.columns(['mission_id', 'upto_seq']).doNothing())
    .execute();
  return (await findCompaction(db, missionId, c.uptoSeq))!;
}

/** The transcript messages in [fromSeq, beforeSeq), in order, with their positions. */
export async function readMessagesBetween(db: Kysely<Database>, missionId: string, fromSeq: number, beforeSeq: number) {
  return db
    .selectFrom('mission_messages')
    .select(['seq', 'role', 'content'])
    .where('mission_id', '=', missionId)
    .where('seq', '>=', fromSeq)
    .where('seq', '<', beforeSeq)
    .orderBy('seq')
    .execute();
}
