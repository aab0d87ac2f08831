import { HttpError } from './errors.ts';

/** An opaque page cursor: the key of a page's last row, tagged with what kind of key it is. */
export const encodeCursor = (kind: string, key: string | number | bigint): string =>
  Buffer.from(`${kind}:${String(key)}`).toString('base64url');

/** The key in a cursor from `encodeCursor`; 400 naming `cursor` for anything else. */
export function decodeCursor(kind: string, cursor: string, key: RegExp): string {
  const text = Buffer.from(cursor, 'base64url').toString();
  const value = text.startsWith(`${kind}:`) ? text.slice(kind.length + 1) : '';
  if (!key.test(value))
    throw new HttpError('validation_failed', 'invalid cursor', { fields: [{ field: 'cursor', message: 'not a cursor from this API' }] });
  return value;
}

/** Cursors over rows keyed by a sequence number (a bigserial, as a decimal string). */
export const encodeSeqCursor = (seq: string | number | bigint): string => encodeCursor('s', seq);
// At most 18 digits: every such key fits a bigint, so no cursor can make the query fail.
export const decodeSeqCursor = (cursor: string): string => decodeCursor('s', cursor, /^\d{1,18}$/);
