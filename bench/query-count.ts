import { Context } from '@temporalio/activity';
import { appendFileSync } from 'node:fs';
import pg from 'pg';

/** `BENCH_QUERY_LOG=<file>`: each counted query's activity and first 300 characters appended there, one a line. */
const QUERY_LOG = process.env.BENCH_QUERY_LOG;

/**
 * Queries sent to Postgres by this process, by the Temporal activity that sent them (`other`: the API, the relay);
 * `notify`: every NOTIFY, whoever sent it (the events' wake-ups and pushes, live events: sent beside the work, never
 * awaited by a result).
 */
export type QueryCounts = Record<string, number>;

let counts: QueryCounts | undefined;

/**
 * Counts every query a `pg` client of this process sends (each one a round trip: BEGIN and COMMIT included), keyed by
 * the activity type it ran in. Instrumentation only: the query goes out unchanged. Returns a function that reads
 * the counts since the last read and starts again.
 */
export function countQueries(): () => QueryCounts {
  if (!counts) {
    counts = {};
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      const by = text.includes('pg_notify(') ? 'notify' : activityType();
      counts![by] = (counts![by] ?? 0) + 1;
      if (QUERY_LOG) appendFileSync(QUERY_LOG, `${by}\t${text.replace(/\s+/g, ' ').slice(0, 300)}\n`);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  }
  return () => {
    const taken = counts!;
    counts = {};
    return taken;
  };
}

function activityType(): string {
  try {
    return Context.current().info.activityType;
  } catch {
    return 'other';
  }
}

/** `a 3 · b 2` in a fixed order (largest first), per `per` units. */
export function formatCounts(c: QueryCounts, per = 1): string {
  return Object.entries(c)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${(n / per).toFixed(1).replace(/\.0$/, '')}`)
    .join(' · ');
}
