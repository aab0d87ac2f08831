import { z } from 'zod';

// Cursors are plain text, `<kind>_<key>`, so that the query schema (and with it the OpenAPI document) states exactly
// which cursors exist as a pattern: a client or a fuzzer that sends anything else is refused by the same schema that
// documents the parameter, never later by the route. Patterns use [0-9], not \d: other regex engines (Python's, which
// Schemathesis generates from) take Unicode digits for \d.

/** The key of a row keyed by a UUID. */
export const UUID_KEY = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
/** A sequence number (a bigserial): at most 18 digits, so every such key fits a bigint and no cursor makes the query fail. */
export const SEQ_KEY = /[0-9]{1,18}/;

/** A page cursor: the key of a page's last row, tagged with what kind of key it is. */
export const encodeCursor = (kind: string, key: string | number | bigint): string => `${kind}_${String(key)}`;

/** The query parameter that takes the cursors of `kind` (400 naming `cursor` for anything else). */
export const cursorParam = (kind: string, key: RegExp) =>
  z.string().regex(new RegExp(`^${kind}_(?:${key.source})$`), 'not a cursor from this API');

/** The key in a cursor its `cursorParam` accepted. */
export const cursorKey = (cursor: string): string => cursor.slice(cursor.indexOf('_') + 1);

/** The kind of the cursors over rows keyed by a sequence number. */
export const SEQ_KIND = 's';
export const seqCursorParam = () => cursorParam(SEQ_KIND, SEQ_KEY);

/** The `nextCursor` of a page: the cursor of its last row when the page is full (more may follow), else null. */
export function nextCursor<R>(rows: readonly R[], limit: number, kind: string, key: (row: R) => string | number | bigint): string | null {
  const last = rows.at(-1);
  return rows.length === limit && last !== undefined ? encodeCursor(kind, key(last)) : null;
}
