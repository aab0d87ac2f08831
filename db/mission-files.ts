import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { fromMission, whereOwner, type Owner } from './owner.ts';
import type { Database, MissionFileRow } from './schema.ts';

/** The call that returned files: its mission, tool-use id and tool. */
export type FileCall = { missionId: string; toolUseId: string; tool: string };
/** What a mission's files already hold apart from this call's, for a cap check. */
export type FileTotals = { count: number; bytes: number };

/**
 * Stores one call's files: the bytes under their sha256 (shared by content), a row per (call, name). Under a lock on
 * the mission row, so calls running side by side count each other; `refuse` sees the totals the mission's other calls
 * hold plus this call's and says why not, or nothing. A call stored before (a re-run after a worker died) gets its
 * own rows back and counts once.
 */
export async function putMissionFiles(
  db: Kysely<Database>,
  call: FileCall,
  files: Array<{ name: string; mediaType: string; bytes: Buffer }>,
  refuse: (totals: FileTotals) => string | undefined,
): Promise<{ ok: true; rows: MissionFileRow[] } | { ok: false; error: string }> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('missions').select('id').where('id', '=', call.missionId).forUpdate().executeTakeFirst();
    const others = await trx
      .selectFrom('mission_files')
      .select([sql<string>`count(*)`.as('count'), sql<string>`coalesce(sum(size), 0)`.as('bytes')])
      .where('mission_id', '=', call.missionId)
      .where('tool_use_id', '!=', call.toolUseId)
      .executeTakeFirstOrThrow();
    const bytes = files.reduce((n, f) => n + f.bytes.length, 0);
    const why = refuse({ count: Number(others.count) + files.length, bytes: Number(others.bytes) + bytes });
    if (why) return { ok: false as const, error: why };
    for (const f of files) {
      const sha256 = createHash('sha256').update(f.bytes).digest('hex');
      await trx
        .insertInto('file_blobs')
        .values({ sha256, bytes: f.bytes, size: f.bytes.length })
        .onConflict((oc) => oc.column('sha256').doNothing())
        .execute();
      await trx
        .insertInto('mission_files')
        .columns(['tenant_id', 'user_id', 'mission_id', 'id', 'tool_use_id', 'tool', 'name', 'media_type', 'sha256', 'size'])
        .expression((eb) =>
          fromMission(eb, call.missionId, [
            sql.val(randomUUID()).as('file_id'),
            sql.val(call.toolUseId).as('tool_use_id'),
            sql.val(call.tool).as('tool'),
            sql.val(f.name).as('name'),
            sql.val(f.mediaType).as('media_type'),
            sql.val(sha256).as('sha256'),
            sql.val(f.bytes.length).as('size'),
          ]),
        )
        .onConflict((oc) => oc.columns(['mission_id', 'tool_use_id', 'name']).doNothing())
        .execute();
    }
    const rows = await trx
      .selectFrom('mission_files')
      .selectAll()
      .where('mission_id', '=', call.missionId)
      .where('tool_use_id', '=', call.toolUseId)
      .where(
        'name',
        'in',
        files.map((f) => f.name),
      )
      .orderBy('name')
      .execute();
    return { ok: true as const, rows };
  });
}

/** A mission's files in the order they were stored. */
export function listMissionFiles(db: Kysely<Database>, missionId: string): Promise<MissionFileRow[]> {
  return db.selectFrom('mission_files').selectAll().where('mission_id', '=', missionId).orderBy('created_at').orderBy('name').execute();
}

/** One of the owner's mission's files with its bytes, or undefined (someone else's is not found either). */
export async function getMissionFile(db: Kysely<Database>, owner: Owner, missionId: string, fileId: string) {
  const row = await db
    .selectFrom('mission_files as f')
    .innerJoin('file_blobs as b', 'b.sha256', 'f.sha256')
    .select(['f.id', 'f.name', 'f.media_type', 'f.size', 'b.bytes'])
    .where('f.tenant_id', '=', owner.tenantId)
    .where('f.user_id', '=', owner.userId)
    .where('f.mission_id', '=', missionId)
    .where('f.id', '=', fileId)
    .executeTakeFirst();
  // pg gives a Buffer, PGlite a Uint8Array.
  return row ? { ...row, bytes: Buffer.from(row.bytes) } : undefined;
}

/** What the owner's mission files hold: how many and their bytes (a blob two files share counts for each). */
export async function ownerFileUsage(db: Kysely<Database>, owner: Owner): Promise<FileTotals> {
  const row = await db
    .selectFrom('mission_files')
    .select([sql<string>`count(*)`.as('count'), sql<string>`coalesce(sum(size), 0)`.as('bytes')])
    .where(whereOwner(owner))
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), bytes: Number(row.bytes) };
}
