import type { Kysely } from 'kysely';

// Sub-missions (issue 35): a mission a `delegate` call started names its parent. The index serves a parent's list of
// children; a child holds no admission slot of its own, and the slot counts skip it by this column.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('missions')
    .addColumn('parent_id', 'text', (c) => c.references('missions.id'))
    .execute();
  await db.schema.createIndex('missions_parent_idx').on('missions').column('parent_id').where('parent_id', 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('missions_parent_idx').execute();
  await db.schema.alterTable('missions').dropColumn('parent_id').execute();
}
