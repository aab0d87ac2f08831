import { sql, type Kysely } from 'kysely';

// The user's activity feed is called `feed` in code, so "activity" means only a Temporal activity.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table activity rename to feed`.execute(db);
  await sql`alter index activity_owner rename to feed_owner`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter index feed_owner rename to activity_owner`.execute(db);
  await sql`alter table feed rename to activity`.execute(db);
}
