import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/** A target's bucket as stored, and how long ago (database clock) it was last refilled. */
export type StoredBucket = { requests: number; inputTokens: number; outputTokens: number; elapsedS: number };
/** A model call that asked for a turn: waiting (`reservedAt` null) or reserved. */
export type ProviderCallRow = {
  id: string;
  tenantId: string;
  userId: string;
  reservedAt: Date | null;
  waitedMs: number;
  estInputTokens: number;
  estOutputTokens: number;
};

/** How long a waiting call may miss its own next check before it counts as gone (its mission cancelled or ended). */
const ABANDONED_S = 30;
/** How long reserved calls are kept: the fair order reads the last minute's, settling a late reply needs the row. */
const KEPT_S = 600;

/** Serialises every reservation and settlement of one target across all processes (a transaction-scoped advisory lock). */
export async function lockTarget(trx: Transaction<Database>, target: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`cadenza-provider:${target}`}))`.execute(trx);
}

/**
 * The bucket (its row locked until the transaction ends, so a settlement's update waits for a reservation's write), and
 * the moment it is read: the clock *after* the target's lock was taken. `now()`, the transaction's start, would move a
 * bucket's time back when a transaction waited for the lock behind a later one, and refill the same seconds twice.
 */
export async function readBucket(trx: Transaction<Database>, target: string): Promise<{ stored?: StoredBucket; at: Date }> {
  const { rows } = await sql<{
    at: Date;
    requests: number | null;
    input_tokens: number | null;
    output_tokens: number | null;
    elapsed_s: number | null;
  }>`
    select c.at, b.requests, b.input_tokens, b.output_tokens, extract(epoch from c.at - b.refilled_at) as elapsed_s
    from (select clock_timestamp() as at) c
    left join (select * from provider_buckets where target = ${target} for update) b on true`.execute(trx);
  const r = rows[0]!;
  if (r.requests === null) return { at: r.at };
  return {
    at: r.at,
    stored: { requests: r.requests, inputTokens: r.input_tokens!, outputTokens: r.output_tokens!, elapsedS: Number(r.elapsed_s) },
  };
}

/** Stores the bucket as refilled at `at` (an unlimited dimension, infinite in memory, is stored as 0 and never read). */
export async function writeBucket(
  trx: Transaction<Database>,
  target: string,
  b: { requests: number; inputTokens: number; outputTokens: number },
  at: Date,
): Promise<void> {
  const f = (n: number) => (Number.isFinite(n) ? n : 0);
  await sql`
    insert into provider_buckets (target, requests, input_tokens, output_tokens, refilled_at)
    values (${target}, ${f(b.requests)}, ${f(b.inputTokens)}, ${f(b.outputTokens)}, ${at})
    on conflict (target) do update set requests = excluded.requests, input_tokens = excluded.input_tokens,
      output_tokens = excluded.output_tokens, refilled_at = excluded.refilled_at`.execute(trx);
}

/** Records a call's ask (once: a repeated ask keeps its place in line), or its estimate as asked again. */
export async function askCall(
  trx: Transaction<Database>,
  call: { id: string; target: string; missionId: string; estInputTokens: number; estOutputTokens: number },
): Promise<void> {
  await sql`
    insert into provider_calls (id, target, mission_id, tenant_id, user_id, est_input_tokens, est_output_tokens)
    select ${call.id}, ${call.target}, m.id, m.tenant_id, m.user_id, ${call.estInputTokens}, ${call.estOutputTokens}
    from missions m where m.id = ${call.missionId}
    on conflict (id) do update set due_at = now()`.execute(trx);
}

/** The calls of `target` waiting for a turn and still asking, oldest first; then the asking call's own row. */
export async function waitingCalls(trx: Transaction<Database>, target: string): Promise<ProviderCallRow[]> {
  const { rows } = await sql<CallRecord>`
    select ${sql.raw(CALL_COLUMNS)} from provider_calls
    where target = ${target} and reserved_at is null and due_at > now() - make_interval(secs => ${ABANDONED_S})
    order by asked_at, id`.execute(trx);
  return rows.map(toCall);
}

export async function getCall(trx: Transaction<Database>, id: string): Promise<ProviderCallRow | undefined> {
  const { rows } = await sql<CallRecord>`select ${sql.raw(CALL_COLUMNS)} from provider_calls where id = ${id}`.execute(trx);
  return rows[0] && toCall(rows[0]);
}

/** Calls of `target` reserved in the last minute, per user: who had turns lately, for the fair order. */
export async function recentTurns(
  trx: Transaction<Database>,
  target: string,
): Promise<Array<{ tenantId: string; userId: string; count: number }>> {
  const { rows } = await sql<{ tenant_id: string; user_id: string; n: string }>`
    select tenant_id, user_id, count(*) as n from provider_calls
    where target = ${target} and reserved_at > now() - interval '60 seconds' group by tenant_id, user_id`.execute(trx);
  return rows.map((r) => ({ tenantId: r.tenant_id, userId: r.user_id, count: Number(r.n) }));
}

export async function markReserved(trx: Transaction<Database>, id: string): Promise<void> {
  await sql`update provider_calls set reserved_at = now() where id = ${id}`.execute(trx);
}

/** When a waiting call will ask again: until then (and a margin) it keeps its place. */
export async function markDue(trx: Transaction<Database>, id: string, waitMs: number): Promise<void> {
  await sql`update provider_calls set due_at = now() + make_interval(secs => ${waitMs / 1000}) where id = ${id}`.execute(trx);
}

/** Drops waiting calls that stopped asking and reserved calls too old to matter. */
export async function pruneCalls(trx: Transaction<Database>, target: string): Promise<void> {
  await sql`
    delete from provider_calls where target = ${target} and (
      (reserved_at is null and due_at < now() - make_interval(secs => ${ABANDONED_S}))
      or reserved_at < now() - make_interval(secs => ${KEPT_S}))`.execute(trx);
}

/**
 * Settles a reserved call with the tokens the provider counted, once: the bucket gets back what the estimate took
 * beyond them, or gives what the call used beyond it (capped at the limits). Its target, or undefined when there was
 * nothing to settle.
 */
export async function settleCall(
  trx: Transaction<Database>,
  id: string,
  used: { inputTokens: number; outputTokens: number },
  caps: { inputTokens: number; outputTokens: number },
): Promise<string | undefined> {
  const { rows } = await sql<{ target: string; est_input_tokens: number; est_output_tokens: number }>`
    update provider_calls set settled_at = now(), input_tokens = ${used.inputTokens}, output_tokens = ${used.outputTokens}
    where id = ${id} and reserved_at is not null and settled_at is null
    returning target, est_input_tokens, est_output_tokens`.execute(trx);
  const r = rows[0];
  if (!r) return undefined;
  await sql`
    update provider_buckets set
      input_tokens = least(${caps.inputTokens}::double precision, input_tokens + ${r.est_input_tokens - used.inputTokens}),
      output_tokens = least(${caps.outputTokens}::double precision, output_tokens + ${r.est_output_tokens - used.outputTokens})
    where target = ${r.target}`.execute(trx);
  return r.target;
}

type CallRecord = {
  id: string;
  tenant_id: string;
  user_id: string;
  reserved_at: Date | null;
  waited_ms: number;
  est_input_tokens: number;
  est_output_tokens: number;
};
const CALL_COLUMNS =
  'id, tenant_id, user_id, reserved_at, extract(epoch from coalesce(reserved_at, now()) - asked_at) * 1000 as waited_ms, est_input_tokens, est_output_tokens';
const toCall = (r: CallRecord): ProviderCallRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  reservedAt: r.reserved_at,
  waitedMs: Number(r.waited_ms),
  estInputTokens: r.est_input_tokens,
  estOutputTokens: r.est_output_tokens,
});
