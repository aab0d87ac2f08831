import type { Kysely } from 'kysely';

// A transcript row remembers when the activity attempt that wrote it was scheduled (Temporal's
// currentAttemptScheduledTimestampMs, in ms), so an attempt that stalls and writes late (a timed-out attempt still
// running beside its retry, or a call cancelled by an interrupt) can no longer replace what a later one wrote: the
// workflow acts on the later one. Rows from before, and copies made by a retry, hold 0.
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['mission_messages', 'tool_calls'])
    await db.schema
      .alterTable(table)
      .addColumn('attempt_scheduled_ms', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['mission_messages', 'tool_calls']) await db.schema.alterTable(table).dropColumn('attempt_scheduled_ms').execute();
}
