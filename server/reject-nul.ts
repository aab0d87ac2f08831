import type { RequestHandler } from 'express';
import { BODY_TYPES } from './body-parsers.ts';
import { HttpError } from './errors.ts';

const MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * 400 for a NUL character anywhere in the path, query or a JSON or text body: Postgres text cannot hold one, so it
 * would otherwise surface as a 500 from whichever query first saw it. A zip is binary: its SKILL.md is checked once
 * unpacked.
 */
export const rejectNul: RequestHandler = (req, _res, next) => {
  const [path = '', query] = req.originalUrl.split('?', 2);
  const body = req.is(BODY_TYPES.zip) ? undefined : req.body;
  const field = /%00/i.test(path) ? 'path' : query !== undefined && /%00/i.test(query) ? 'query' : nulField(body, 'body');
  if (field !== undefined) throw new HttpError('validation_failed', `${field} ${MESSAGE}`, { fields: [{ field, message: MESSAGE }] });
  next();
};

/** The dotted path of the first string (value or key) holding a NUL, if any. */
function nulField(value: unknown, at: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? at : undefined;
  if (Buffer.isBuffer(value)) return value.includes(0) ? at : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const where = at === 'body' ? k : `${at}.${k}`;
    if (k.includes('\u0000')) return where;
    const found = nulField(v, where);
    if (found !== undefined) return found;
  }
  return undefined;
}
