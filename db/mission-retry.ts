import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** What a mission's run left in Postgres, by turn: every transcript row, tool output and model call's usage. */
export async function readRunRecords(db: Kysely<Database>, missionId: string) {
  const [messages, toolCalls, modelCalls] = await Promise.all([
    db.selectFrom('mission_messages').select(['seq', 'content']).where('mission_id', '=', missionId).orderBy('seq').execute(),
    db.selectFrom('tool_calls').select(['turn', 'tool_use_id', 'status']).where('mission_id', '=', missionId).execute(),
    db
      .selectFrom('model_calls')
      .select(['call_key', 'model', 'input_tokens', 'output_tokens'])
      .where('mission_id', '=', missionId)
      .execute(),
  ]);
  return { messages, toolCalls, modelCalls };
}
export type RunRecords = Awaited<ReturnType<typeof readRunRecords>>;

/**
 * Copies the carried-over part of mission `from` into mission `to`: transcript rows up to position `lastSeq` and the
 * tool outputs of the turns before `beforeTurn`. Model usage is not copied (it stays the first run's; the retry's
 * workflow input carries the totals).
 */
export async function copyRunRecords(
  db: Kysely<Database>,
  o: { from: string; to: string; lastSeq: number; beforeTurn: number },
): Promise<void> {
  await sql`insert into mission_messages (mission_id, seq, role, content)
    select ${o.to}, seq, role, content from mission_messages where mission_id = ${o.from} and seq <= ${o.lastSeq}`.execute(db);
  await sql`insert into tool_calls (mission_id, turn, tool_use_id, tool, status, output, duration_ms, attempt)
    select ${o.to}, turn, tool_use_id, tool, status, output, duration_ms, attempt
    from tool_calls where mission_id = ${o.from} and turn < ${o.beforeTurn}`.execute(db);
}

/** The mission that retries this one, if any (one at most: unique index `missions_retry_of`). */
export async function findRetryOf(db: Kysely<Database>, missionId: string): Promise<string | undefined> {
  const row = await db.selectFrom('missions').select('id').where('retry_of', '=', missionId).executeTakeFirst();
  return row?.id;
}
