import pg from 'pg';

/** Postgres type oids whose text form `pg` parses slowly: `double precision[]` (the embeddings' column type). */
const FLOAT8_ARRAY = 1022;

/**
 * `pg`'s type parsers with a fast path for `double precision[]`: memory and skill retrieval read thousands of stored
 * vectors per mission, and `pg`'s array parser (one character at a time) took about an eighth of a busy worker's CPU.
 * A flat array of finite numbers is valid JSON once its braces become brackets; anything else (NULL elements, NaN,
 * Infinity, nested arrays) goes to `pg`'s own parser.
 */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === FLOAT8_ARRAY && format !== 'binary') return parseFloat8Array;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

const slowFloat8Array = pg.types.getTypeParser(FLOAT8_ARRAY as never, 'text') as (value: string) => unknown;

/** A `double precision[]` in Postgres's text form: JSON when it is a flat list of plain numbers, else `pg`'s parser. */
export function parseFloat8Array(value: string): unknown {
  const inner = value.slice(1, -1);
  if (value.startsWith('{') && value.endsWith('}') && !NOT_PLAIN.test(inner)) {
    try {
      return JSON.parse(`[${inner}]`);
    } catch {
      // not a form Postgres writes (e.g. an empty element): the general parser decides
    }
  }
  return slowFloat8Array(value);
}

// Anything but digits, signs, points, exponents and commas (NULL, NaN, Infinity, quotes, nested braces).
const NOT_PLAIN = /[^0-9eE+\-.,]/;
