import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { putMissionFiles, type FileCall, type FileTotals } from '../db/mission-files.ts';
import type { Database } from '../db/schema.ts';
import { FILES_KEY, fileRef, takeFiles } from '../embeds/tool-files.ts';
import type { ToolReply } from '../tools/http-executor.ts';

/**
 * A tool's reply with its `files` stored and replaced by references, so neither the transcript, the embed nor the
 * kept answer (heartbeat details) carries their bytes. A file the caps refuse makes the reply an error the model sees,
 * naming the cap. Stored by content and per (call, name): a call run again after a worker's death writes nothing twice.
 */
export async function keepToolFiles(
  db: Kysely<Database>,
  caps: Config['missionFiles'],
  call: FileCall,
  reply: ToolReply,
): Promise<ToolReply> {
  if (!reply.ok) return reply;
  const taken = takeFiles(reply.result, caps.maxBytes);
  if (!taken.ok) return { ok: false, error: taken.error };
  if (taken.files.length === 0) return reply;
  const stored = await putMissionFiles(db, call, taken.files, (totals) => overCaps(totals, caps));
  if (!stored.ok) return { ok: false, error: stored.error };
  return { ok: true, result: { ...(taken.rest as Record<string, unknown>), [FILES_KEY]: stored.rows.map(fileRef) } };
}

function overCaps(totals: FileTotals, caps: Config['missionFiles']): string | undefined {
  if (totals.count > caps.maxCount)
    return `the mission's files would number ${totals.count}, over MISSION_FILE_MAX_COUNT (${caps.maxCount})`;
  if (totals.bytes > caps.totalBytes)
    return `the mission's files would hold ${totals.bytes} bytes, over MISSION_FILE_TOTAL_BYTES (${caps.totalBytes})`;
  return undefined;
}
