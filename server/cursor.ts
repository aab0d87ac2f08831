import { HttpError } from './errors.ts';

/** An opaque page cursor carrying a row's sequence number (a bigserial, as a decimal string). */
export const encodeSeqCursor = (seq: string | number | bigint): string => Buffer.from(`s:${String(seq)}`).toString('base64url');

/** The sequence number in a cursor from `encodeSeqCursor`; 400 naming `cursor` for anything else. */
export function decodeSeqCursor(cursor: string): string {
  const m = /^s:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m) throw new HttpError('validation_failed', 'invalid cursor', { fields: [{ field: 'cursor', message: 'not a cursor from this API' }] });
  return m[1]!;
}
