import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { lockTarget } from './provider-limits.ts';

/**
 * The window a target's sends are counted in: a minute and a second. A provider counts a request when it arrives,
 * some milliseconds after it was recorded here, and in an order the network may shuffle; the extra second keeps two
 * sends recorded a minute apart from arriving inside one minute.
 */
const WINDOW_S = 61;

/**
 * Records one request to `target` about to be sent if fewer than `perMinute` were sent in the last window, under the
 * target's lock every process shares; else records nothing and answers how long until the oldest leaves the window.
 * Requests paced so never exceed a provider's per-minute limit, however their reservations were granted.
 */
export async function recordSend(db: Kysely<Database>, target: string, perMinute: number): Promise<{ waitMs: number }> {
  return db.transaction().execute(async (trx) => {
    await lockTarget(trx, target);
    const { rows } = await sql<{ sent: number; wait_ms: number | null }>`
      select count(*)::int as sent,
             extract(epoch from min(sent_at) + make_interval(secs => ${WINDOW_S}) - clock_timestamp()) * 1000 as wait_ms
        from provider_sends
       where target = ${target} and sent_at > clock_timestamp() - make_interval(secs => ${WINDOW_S})`.execute(trx);
    const { sent, wait_ms } = rows[0]!;
    if (sent >= perMinute) return { waitMs: Math.max(1, Math.ceil(Number(wait_ms ?? 0))) };
    await sql`insert into provider_sends (target, sent_at) values (${target}, clock_timestamp())`.execute(trx);
    await sql`delete from provider_sends where target = ${target} and sent_at < clock_timestamp() - make_interval(secs => ${2 * WINDOW_S})`.execute(
      trx,
    );
    return { waitMs: 0 };
  });
}
