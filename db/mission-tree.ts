import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Missions that `delegate` calls started form trees through `parent_id` (migration 036). */

/** How deep the mission sits: 0 for a root, 1 for its child, and so on (the walk stops after `limit` steps). */
export async function missionDepth(db: Kysely<Database>, id: string, limit: number): Promise<number> {
  const row = await sql<{ depth: number }>`
    with recursive up(id, parent_id, depth) as (
      select id, parent_id, 0 from missions where id = ${id}
      union all
      select m.id, m.parent_id, up.depth + 1 from missions m join up on m.id = up.parent_id where up.depth < ${limit}
    )
    select max(depth)::int as depth from up`.execute(db);
  return Number(row.rows[0]?.depth ?? 0);
}

/** A mission's children, oldest first: what its detail lists. */
export async function listChildren(db: Kysely<Database>, parentId: string) {
  return db
    .selectFrom('missions')
    .select(['id', 'status', 'skill_name', 'skill_version', 'created_at', 'finished_at'])
    .where('parent_id', '=', parentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Every model call of the mission and of its descendants: what a sub-mission's tree used, however it ended. */
export async function treeModelCalls(db: Kysely<Database>, id: string) {
  const rows = await sql<{ model: string; input_tokens: number; output_tokens: number }>`
    with recursive tree(id) as (
      select ${id}::text
      union all
      select m.id from missions m join tree on m.parent_id = tree.id
    )
    select model, input_tokens, output_tokens from model_calls where mission_id in (select id from tree)`.execute(db);
  return rows.rows;
}
