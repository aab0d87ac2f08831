import type { MissionFileRow } from '../db/schema.ts';

/** A file a tool or a script returned, decoded, before it is stored. */
export type ReturnedFile = { name: string; mediaType: string; bytes: Buffer };

/** The `files` of a tool result taken out: the rest of the result and the files, or why they are refused. */
export type TakenFiles = { ok: true; rest: unknown; files: ReturnedFile[] } | { ok: false; error: string };

/** The key of a tool result that carries files: `files: [{name, mediaType, base64 | url}]`. */
export const FILES_KEY = 'files';

/** A stored file as a tool result, the embed and the mission result name it. */
export type FileRef = { id: string; name: string; mediaType: string; size: number; url: string };

export const fileRef = (row: MissionFileRow): FileRef => ({
  id: row.id,
  name: row.name,
  mediaType: row.media_type,
  size: row.size,
  url: `/api/v1/missions/${row.mission_id}/files/${row.id}`,
});

const MAX_NAME_CHARS = 255;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;
const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;
const DEFAULT_MEDIA_TYPE = 'application/octet-stream';

/**
 * Pure: the files of a raw tool result, each checked (a name, a media type, base64 bytes within `maxBytes`). A file
 * given by `url` is refused, never fetched: Cadenza would fetch an address a tool server chose, from inside the
 * deployment. One bad file refuses them all, with an error the model can act on (a cap is named by its variable).
 */
export function takeFiles(raw: unknown, maxBytes: number): TakenFiles {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !(FILES_KEY in raw)) return { ok: true, rest: raw, files: [] };
  const { [FILES_KEY]: value, ...rest } = raw as Record<string, unknown>;
  if (!Array.isArray(value)) return { ok: false, error: 'files must be a list of {name, mediaType, base64}' };
  const files: ReturnedFile[] = [];
  for (const [i, item] of value.entries()) {
    const file = takeFile(item, maxBytes);
    if (typeof file === 'string') return { ok: false, error: `files[${i}]: ${file}` };
    files.push(file);
  }
  const names = new Set(files.map((f) => f.name));
  if (names.size < files.length) return { ok: false, error: 'files: two files have the same name' };
  return { ok: true, rest, files };
}

function takeFile(item: unknown, maxBytes: number): ReturnedFile | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'not an object {name, mediaType, base64}';
  const { name, mediaType, base64, url } = item as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name))
    return `name must be text of 1–${MAX_NAME_CHARS} characters without control characters`;
  if (mediaType !== undefined && (typeof mediaType !== 'string' || !MEDIA_TYPE.test(mediaType)))
    return `${name}: mediaType must be a media type such as text/csv`;
  if (url !== undefined && base64 === undefined)
    return `${name}: a file given by url is refused (Cadenza fetches no address a tool returns); send its bytes as base64`;
  if (typeof base64 !== 'string' || !BASE64.test(base64)) return `${name}: base64 must be the file's bytes in base64`;
  // Checked on the encoded length first, so an oversized file is never decoded.
  if (Math.floor((base64.replace(/\s/g, '').length * 3) / 4) > maxBytes + 2) return overCap(name, maxBytes);
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > maxBytes) return overCap(name, maxBytes);
  return { name: name.trim(), mediaType: (mediaType as string | undefined)?.toLowerCase() ?? DEFAULT_MEDIA_TYPE, bytes };
}

const overCap = (name: string, maxBytes: number) => `${name} is larger than MISSION_FILE_MAX_BYTES (${maxBytes} bytes)`;
