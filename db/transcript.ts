import { sql, type Kysely, type QueryCreator } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { ChatMessage } from '../model/model-types.ts';
import type { Database, MissionUpdate } from './schema.ts';
import {
  embedStartsInsert,
  feedStartsInsert,
  staleEmbedsDelete,
  staleFeedStartsDelete,
  type ReplyToolStarts,
  type StaleEmbedsSource,
} from './tool-starts.ts';

/**
 * The rule of every transcript upsert: a write replaces a row only when the activity attempt making it was scheduled
 * no earlier than the one that wrote the row. The workflow acts on the later attempt (a timed-out attempt's result is
 * refused by Temporal, a call an interrupt or a cancel replaced is not awaited), so an earlier attempt that stalls and
 * writes late must not replace what the workflow read. Ties replace, as a retried write of one attempt should.
 */
export const notFromEarlierAttempt = <T extends 'mission_messages' | 'tool_calls'>(table: T) =>
  sql<boolean>`${sql.ref(`${table}.attempt_scheduled_ms`)} <= excluded.attempt_scheduled_ms`;

/**
 * A mission's frozen plan (the columns prepareMission fills) and its opening message (position 0), in one statement:
 * one round trip, all or none; a retried attempt rewrites both.
 */
export async function putPlanAndObjective(
  db: Kysely<Database>,
  missionId: string,
  plan: MissionUpdate,
  objective: ChatMessage,
  attemptScheduledMs: number,
): Promise<void> {
  const content = JSON.stringify(objective.content);
  await db
    .with('plan', (qc) =>
      qc
        .updateTable('missions')
        .set({ ...plan, updated_at: new Date() })
        .where('id', '=', missionId),
    )
    .insertInto('mission_messages')
    .values({ mission_id: missionId, seq: 0, role: objective.role, content, attempt_scheduled_ms: attemptScheduledMs })
    .onConflict((oc) =>
      oc
        .columns(['mission_id', 'seq'])
        .doUpdateSet({ role: objective.role, content, attempt_scheduled_ms: attemptScheduledMs })
        .where(notFromEarlierAttempt('mission_messages')),
    )
    .execute();
}

/** The mission's opening message (position 0), as prepareMission wrote it. */
export async function readObjective(db: Kysely<Database>, missionId: string): Promise<ChatMessage> {
  const row = await db
    .selectFrom('mission_messages')
    .select(['role', 'content'])
    .where('mission_id', '=', missionId)
    .where('seq', '=', 0)
    .executeTakeFirstOrThrow();
  return { role: row.role as ChatMessage['role'], content: row.content as ChatMessage['content'] };
}

/** A stored tool output as the model's next call reads it. */
export type ToolOutputRow = { tool_use_id: string; status: string; output: unknown };

/**
 * What a model call reads, in one statement (one round trip): the conversation before `beforeSeq`, in order, and the
 * stored outputs of `turn`'s tool calls among `toolUseIds`. With a compaction in use, the conversation is the opening
 * message and the messages from the compaction's cut on, and `compaction` is its summary.
 */
export async function readTurnInputs(
  db: Kysely<Database>,
  missionId: string,
  beforeSeq: number,
  outputsOf: { turn: number; toolUseIds: string[] } | undefined,
): Promise<{ messages: ChatMessage[]; outputs: ToolOutputRow[]; compaction?: { uptoSeq: number; summary: string } }> {
  const latest = db.selectFrom('context_compactions').where('mission_id', '=', missionId).orderBy('upto_seq', 'desc').limit(1);
  const row = await db
    .selectNoFrom((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom('mission_messages')
          .select(['role', 'content'])
          .where('mission_id', '=', missionId)
          .where('seq', '<', beforeSeq)
          .where((w) => w.or([w('seq', '=', 0), w('seq', '>=', w.fn.coalesce(latest.select('upto_seq'), w.lit(0)))]))
          .orderBy('seq'),
      ).as('messages'),
      jsonArrayFrom(
        eb
          .selectFrom('tool_calls')
          .select(['tool_use_id', 'status', 'output'])
          .where('mission_id', '=', missionId)
          .where('turn', '=', outputsOf?.turn ?? -1)
          .where('tool_use_id', 'in', outputsOf?.toolUseIds.length ? outputsOf.toolUseIds : ['']),
      ).as('outputs'),
      jsonObjectFrom(latest.select(['upto_seq', 'summary'])).as('compaction'),
    ])
    .executeTakeFirstOrThrow();
  const compaction = row.compaction && row.compaction.upto_seq < beforeSeq ? row.compaction : undefined;
  return {
    messages: row.messages.map((r) => ({ role: r.role as ChatMessage['role'], content: r.content as ChatMessage['content'] })),
    outputs: outputsOf ? (row.outputs as ToolOutputRow[]) : [],
    ...(compaction ? { compaction: { uptoSeq: compaction.upto_seq, summary: compaction.summary } } : {}),
  };
}

/** Stores a tool call's output (idempotent per turn and tool use: a later attempt overwrites an earlier one's row). */
export async function putToolCall(
  db: Kysely<Database>,
  row: {
    missionId: string;
    turn: number;
    toolUseId: string;
    tool: string;
    status: string;
    output: unknown;
    durationMs: number;
    attempt: number;
    attemptScheduledMs: number;
  },
): Promise<void> {
  const values = {
    mission_id: row.missionId,
    turn: row.turn,
    tool_use_id: row.toolUseId,
    tool: row.tool,
    status: row.status,
    output: JSON.stringify(row.output ?? null),
    duration_ms: row.durationMs,
    attempt: row.attempt,
    attempt_scheduled_ms: row.attemptScheduledMs,
  };
  await db
    .insertInto('tool_calls')
    .values(values)
    .onConflict((oc) => oc.columns(['mission_id', 'turn', 'tool_use_id']).doUpdateSet(values).where(notFromEarlierAttempt('tool_calls')))
    .execute();
}

/** Every tool call of a mission, by turn (within a turn, in the order the calls were stored). */
export async function listToolCalls(db: Kysely<Database>, missionId: string) {
  return db
    .selectFrom('tool_calls')
    .select(['turn', 'tool_use_id', 'tool', 'status', 'output', 'attempt'])
    .where('mission_id', '=', missionId)
    .orderBy('turn')
    .orderBy('created_at')
    .execute();
}

/** The model's replies of a mission with their positions (the reply of turn t sits at 2t-1). */
export async function listReplies(db: Kysely<Database>, missionId: string) {
  const rows = await db
    .selectFrom('mission_messages')
    .select(['seq', 'content'])
    .where('mission_id', '=', missionId)
    .where('role', '=', 'assistant')
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ turn: (r.seq + 1) / 2, content: r.content as ChatMessage['content'] }));
}

/** The input the model gave one tool use of a turn (its reply sits at 2t-1), or undefined when there is none. */
export async function readToolUseInput(
  db: Kysely<Database>,
  missionId: string,
  turn: number,
  toolUseId: string,
): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom('mission_messages')
    .select('content')
    .where('mission_id', '=', missionId)
    .where('seq', '=', 2 * turn - 1)
    .executeTakeFirst();
  const blocks = (row?.content ?? []) as ChatMessage['content'];
  const block = blocks.find((b) => b.type === 'tool_use' && b.id === toolUseId);
  return block?.type === 'tool_use' ? block.input : undefined;
}

/** A model call's usage, as stored beside its reply. */
export type ModelCallRecord = {
  callKey: string;
  /** The provider that answered (a fallback's when the call moved on); absent for calls recorded before it was kept. */
  provider?: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  stopReason: string;
  durationMs: number;
};

/**
 * The model's reply at its fixed position, the turn's opening message when it has one, the call's usage row (first
 * write stands) and the starts of the tool calls the reply asks for (`db/tool-starts.ts`), in one statement: one round
 * trip, and all or none. The messages follow `notFromEarlierAttempt`, and the starts (and the removal of what no call
 * will end) are written only by an attempt whose reply is not superseded. Answers the tenant's app switches when it
 * started a call: read at call time, before the tool runs.
 */
export async function putReplyAndCall(
  db: Kysely<Database>,
  missionId: string,
  seq: number,
  reply: ChatMessage,
  call: ModelCallRecord,
  attemptScheduledMs: number,
  opening: { seq: number; message: ChatMessage } | undefined,
  starts: ReplyToolStarts,
): Promise<{ switches: Record<string, boolean> }> {
  const row = (at: number, m: ChatMessage) => ({
    mission_id: missionId,
    seq: at,
    role: m.role,
    content: JSON.stringify(m.content),
    attempt_scheduled_ms: attemptScheduledMs,
  });
  // The statement's CTEs see the rows as they were before it: the reply's own upsert is checked again here. A mission
  // that ended meanwhile (cancelled while this call stored its reply) starts nothing: its end removed what was open.
  const current = sql<boolean>`not exists (select 1 from mission_messages m where m.mission_id = ${missionId} and m.seq = ${seq} and m.attempt_scheduled_ms > ${attemptScheduledMs})
    and exists (select 1 from missions where missions.id = ${missionId} and missions.finished_at is null)`;
  const part = { missionId, starts, current };
  const written = await db
    .with('messages', (qb) =>
      qb
        .insertInto('mission_messages')
        .values([...(opening ? [row(opening.seq, opening.message)] : []), row(seq, reply)])
        .onConflict((oc) =>
          oc
            .columns(['mission_id', 'seq'])
            .doUpdateSet((eb) => ({
              role: eb.ref('excluded.role'),
              content: eb.ref('excluded.content'),
              attempt_scheduled_ms: eb.ref('excluded.attempt_scheduled_ms'),
            }))
            .where(notFromEarlierAttempt('mission_messages')),
        )
        .returning('seq'),
    )
    .with('model_call', (qc) =>
      qc
        .insertInto('model_calls')
        .values(modelCallValues(missionId, call))
        .onConflict((oc) => oc.constraint('model_calls_key').doNothing()),
    )
    .with('stale_embeds', (qc) => staleEmbedsDelete(qc as unknown as QueryCreator<Database>, part))
    .with('stale_feed', (qc) => staleFeedStartsDelete(qc as unknown as StaleEmbedsSource, missionId))
    .with('feed_starts', (qc) => feedStartsInsert(qc as unknown as QueryCreator<Database>, part))
    .with('embed_starts', (qc) => embedStartsInsert(qc as unknown as QueryCreator<Database>, part))
    .selectNoFrom((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('tenant_apps')
          .select(['app_id', 'enabled'])
          .where('tenant_id', '=', starts.owner.tenantId)
          .where(sql.lit(starts.calls.length > 0)),
      ).as('switches'),
    )
    .executeTakeFirstOrThrow();
  return { switches: Object.fromEntries(written.switches.map((s) => [s.app_id, s.enabled])) };
}

/** A model call's usage row alone (first write stands), for calls whose reply is kept elsewhere. */
export async function putModelCall(db: Kysely<Database>, missionId: string, call: ModelCallRecord): Promise<void> {
  await db
    .insertInto('model_calls')
    .values(modelCallValues(missionId, call))
    .onConflict((oc) => oc.constraint('model_calls_key').doNothing())
    .execute();
}

const modelCallValues = (missionId: string, call: ModelCallRecord) => ({
  mission_id: missionId,
  call_key: call.callKey,
  provider: call.provider ?? null,
  model: call.model,
  input_tokens: call.inputTokens,
  output_tokens: call.outputTokens,
  stop_reason: call.stopReason,
  duration_ms: call.durationMs,
});

/** How many replies the model gave a mission (its turns, when it did not complete). */
export async function countReplies(db: Kysely<Database>, missionId: string): Promise<number> {
  const row = await db
    .selectFrom('mission_messages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('mission_id', '=', missionId)
    .where('role', '=', 'assistant')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
