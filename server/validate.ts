import type { RequestHandler } from 'express';
import { z } from 'zod';
import { HttpError } from './errors.ts';

/**
 * Parses `req[part]` with a zod schema; 400 naming each failing field, else the parsed value in res.locals. A request
 * without a body is refused (400 naming `body`) unless the schema takes `undefined` (an optional body, `.default({})`):
 * a PUT with nothing in it must not replace what was saved with defaults. The OpenAPI document marks the body
 * required by the same test (server/openapi/openapi-document.ts).
 */
export function validate(part: 'body' | 'query' | 'params', schema: z.ZodType): RequestHandler {
  return (req, res, next) => {
    const given: unknown = part === 'body' ? req.body : (req[part] ?? {});
    if (given === undefined && bodyRequired(schema)) {
      throw new HttpError('validation_failed', 'a request body is required: send application/json', {
        fields: [{ field: 'body', message: 'required' }],
      });
    }
    const parsed = schema.safeParse(given);
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

/** True when a body schema refuses a request without a body. */
export const bodyRequired = (schema: z.ZodType): boolean => !schema.safeParse(undefined).success;

/**
 * A whole number in a query string, `min..max`: decimal digits only (no `0x5`, ` 5`, `1e1` or `1.5`, which a plain
 * coercion takes), documented as the integer range it is.
 */
export const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,10}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ type: 'integer', minimum: min, maximum: max });
