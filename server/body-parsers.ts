import express, { type Request, type RequestHandler } from 'express';
import type { Config } from '../config/config.ts';
import { HttpError } from './errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';
import { ZIP_TYPES } from './skill-input.ts';
import { uploadSlots } from './upload-slots.ts';

/** What a request body may be: JSON, a raw SKILL.md, or a skill folder as a zip. */
export type BodyKind = 'json' | 'markdown' | 'zip';

/** The content types of each kind, the first one named in a 415. */
export const BODY_TYPES: Record<BodyKind, string[]> = {
  json: ['application/json'],
  markdown: ['text/markdown', 'text/plain'],
  zip: ZIP_TYPES,
};

/** Zip uploads read and processed at once per process, and how many may wait for a turn (then 503). */
const ZIP_UPLOADS_AT_ONCE = 2;
const ZIP_UPLOADS_WAITING = 32;

type Limits = Pick<Config, 'bodyLimitBytes'> & { skills: Pick<Config['skills'], 'bundle'> };

/** The largest zip upload: the caps on its files, plus room for the archive's headers and directory. */
export const zipBodyLimit = ({ bundle }: Limits['skills']): number => bundle.maxTotalBytes + bundle.maxFiles * 1024 + 65_536;

/**
 * Reads the request body for a group of routes that take the given kinds. A body of any other content type is a
 * 415 naming what is accepted, refused before it is read; JSON nested deeper than MAX_JSON_DEPTH is a 400 found
 * by a scan of the raw bytes before parsing; a body over its limit is a 413 naming the limit and its variable.
 * SKILL.md and zip bodies stay raw bytes (decoded by the route), so a byte-order mark survives: exports are verbatim.
 * Zip uploads take turns (see upload-slots.ts), so a flood of them cannot grow the process's memory without bound.
 * Mounted once per group, the most specific path first: the first group to see a request reads its body.
 */
export function readBodies(kinds: BodyKind[], limits: Limits): RequestHandler[] {
  const accepted = kinds.flatMap((k) => BODY_TYPES[k]);
  const named = kinds.map((k) => BODY_TYPES[k][0]!);
  const sendInstead = named.length > 1 ? `${named.slice(0, -1).join(', ')} or ${named.at(-1)}` : named[0];
  const bodyLimit = { bytes: limits.bodyLimitBytes, variable: 'BODY_LIMIT_KB' };
  const zipLimit = { bytes: zipBodyLimit(limits.skills), variable: 'SKILL_BUNDLE_MAX_TOTAL_KB and SKILL_BUNDLE_MAX_FILES' };
  const parsers: Record<BodyKind, RequestHandler> = {
    json: express.json({ limit: bodyLimit.bytes, verify: refuseDeepJson }),
    markdown: express.raw({ type: BODY_TYPES.markdown, limit: bodyLimit.bytes }),
    zip: express.raw({ type: BODY_TYPES.zip, limit: zipLimit.bytes }),
  };
  const gate: RequestHandler = (req, res, next) => {
    if (res.locals.bodyRead || !hasBody(req)) return next();
    res.locals.bodyRead = true;
    if (!req.is(accepted)) {
      const type = req.get('content-type');
      const what = type ? `content-type ${type.split(';')[0]!.trim()} is not accepted here` : 'a body without a content-type';
      throw new HttpError('unsupported_media_type', `${what}: send ${sendInstead}`, { accepts: named });
    }
    next();
  };
  // Zip uploads are the one body large enough (megabytes, several copies while processed) to need a bound in flight.
  const zipSlots = uploadSlots(ZIP_UPLOADS_AT_ONCE, ZIP_UPLOADS_WAITING);
  const throttleZips: RequestHandler = (req, res, next) =>
    kinds.includes('zip') && hasBody(req) && req.is(BODY_TYPES.zip) ? zipSlots(req, res, next) : next();
  return [
    gate,
    throttleZips,
    ...kinds.map(
      (kind): RequestHandler =>
        (req, res, next) =>
          parsers[kind](req, res, (err?: unknown) => next(err && namedRefusal(err, kind === 'zip' ? zipLimit : bodyLimit))),
    ),
  ];
}

/** A request with a body to read (an empty body, `content-length: 0`, is none). */
const hasBody = (req: Request): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;

const TOO_DEEP = 'entity.too.deep';

/**
 * body-parser's refusals that need words of our own: "too large" as a 413 naming the limit and the variable that
 * sets it, too deep as a 400. (Its error objects also hold the whole body; none is kept.)
 */
function namedRefusal(err: unknown, limit: { bytes: number; variable: string }): unknown {
  const type = (err as { type?: string }).type;
  if (type === TOO_DEEP) {
    const message = `nested more than ${MAX_JSON_DEPTH} levels deep`;
    return new HttpError('validation_failed', `JSON body is ${message}`, { fields: [{ field: 'body', message }] });
  }
  if (type !== 'entity.too.large') return err;
  const kb = Math.floor(limit.bytes / 1024);
  return new HttpError('payload_too_large', `request body is over the limit of ${kb} KB (set by ${limit.variable})`, {
    limitBytes: limit.bytes,
    variable: limit.variable,
  });
}

/** body-parser's `verify` hook: sees the (inflated) raw bytes before JSON.parse does. */
function refuseDeepJson(_req: unknown, _res: unknown, buf: Buffer, encoding: string): void {
  // A plain error marked by type: body-parser decorates what is thrown here, which an HttpError does not allow.
  if (nestsDeeperThan(decodedIfNeeded(buf, encoding), MAX_JSON_DEPTH)) throw Object.assign(new Error('too deep'), { type: TOO_DEEP });
}

// UTF-8 bytes can be scanned as they are; UTF-16 and other encodings are decoded first.
function decodedIfNeeded(buf: Buffer, encoding: string): Uint8Array | string {
  if (/^utf-?8$/i.test(encoding)) return buf;
  try {
    return new TextDecoder(encoding).decode(buf);
  } catch {
    return buf;
  }
}
