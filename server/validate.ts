import type { RequestHandler } from 'express';
import type { z } from 'zod';
import { HttpError } from './errors.ts';

/** Parses `req[part]` with a zod schema; 400 naming each failing field, else the parsed value in res.locals. */
export function validate(part: 'body' | 'query' | 'params', schema: z.ZodType): RequestHandler {
  return (req, res, next) => {
    const parsed = schema.safeParse(req[part] ?? {});
    if (!parsed.success) {
      // An unknown key is reported on its parent; name the key itself so the caller sees which field to drop.
      const fields = parsed.error.issues.flatMap((i) =>
        i.code === 'unrecognized_keys'
          ? i.keys.map((k) => ({ field: [...i.path, k].join('.'), message: 'unknown field' }))
          : [{ field: i.path.join('.') || part, message: i.message }],
      );
      throw new HttpError('validation_failed', `invalid ${part}: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, { fields });
    }
    res.locals[part] = parsed.data;
    next();
  };
}
