import type { ErrorRequestHandler } from 'express';
import {
  ConflictError,
  DomainError,
  ModelUnconfiguredError,
  NotFoundError,
  RateLimitedError,
  TooLargeError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '../contracts/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { unavailableService } from './unavailable.ts';

/** What a 503 tells the client to wait before it retries. */
export const RETRY_AFTER_SECONDS = 5;

/** The closed set of error codes the API answers with. */
export const ERROR_CODES = {
  validation_failed: 400,
  malformed_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
  model_unconfigured: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** A failure with its HTTP meaning, thrown at the edge (routers, middleware); services throw `DomainError`s instead. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Sent as `Retry-After` (a 429 says when the client may try again). */
  readonly retryAfterS: number | undefined;
  constructor(code: ErrorCode, message: string, details?: unknown, opts: { retryAfterS?: number } = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.details = details;
    this.retryAfterS = opts.retryAfterS;
  }
  get status(): number {
    return ERROR_CODES[this.code];
  }
}

export const notFound = (what: string) => new HttpError('not_found', `${what} not found`);

/**
 * Renders every failure as `{error:{code,message,details?}}`; never a stack trace or an infrastructure address to the
 * client. A database or Temporal that cannot be reached is `503 unavailable` with `Retry-After`.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = toHttpError(err);
    if (e.code === 'unavailable') logger.warn('request failed: a backing service is unavailable', { requestId: res.locals.requestId, err });
    else if (e.status >= 500) logger.error('request failed', { requestId: res.locals.requestId, err });
    if (res.headersSent) return void res.end();
    if (e.code === 'unavailable') res.set('retry-after', String(RETRY_AFTER_SECONDS));
    if (e.retryAfterS !== undefined) res.set('retry-after', String(e.retryAfterS));
    // RFC 6750: a 401 names the scheme it wants, so a client (an MCP host among them) knows to send a bearer key.
    if (e.code === 'unauthorized') res.set('www-authenticate', 'Bearer realm="cadenza"');
    res.status(e.status).json({ error: { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) } });
  };
}

/** Each kind of domain error and the code it is answered with. */
const DOMAIN_CODES: ReadonlyArray<readonly [abstract new (...args: never[]) => DomainError, ErrorCode]> = [
  [NotFoundError, 'not_found'],
  [ConflictError, 'conflict'],
  [ValidationError, 'validation_failed'],
  [UnprocessableError, 'unprocessable'],
  [TooLargeError, 'payload_too_large'],
  [RateLimitedError, 'rate_limited'],
  [UnavailableError, 'unavailable'],
  [ModelUnconfiguredError, 'model_unconfigured'],
];

function fromDomainError(err: DomainError): HttpError {
  const code = DOMAIN_CODES.find(([kind]) => err instanceof kind)?.[1] ?? 'internal';
  const retryAfterS = err instanceof RateLimitedError ? err.retryAfterS : undefined;
  return new HttpError(code, code === 'internal' ? 'internal error' : err.message, code === 'internal' ? undefined : err.details, {
    ...(retryAfterS !== undefined ? { retryAfterS } : {}),
  });
}

/** The HTTP answer to any failure: edge errors as they are, domain errors by kind, unreachable services as 503. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError) return fromDomainError(err);
  const service = unavailableService(err);
  if (service === 'busy database') return new HttpError('unavailable', 'the database is busy; retry later');
  if (service) return new HttpError('unavailable', `${service === 'database' ? 'the database' : service} is unavailable; retry later`);
  const type = (err as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new HttpError('malformed_json', 'request body is not valid JSON');
  if (type === 'entity.too.large') return new HttpError('payload_too_large', 'request body is too large');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported')
    return new HttpError('unsupported_media_type', 'unsupported body encoding');
  // Any other body-parser failure (a corrupt gzip stream, a wrong content-length) is the client's, marked 400.
  if ((err as { status?: number } | null)?.status === 400) {
    return new HttpError('validation_failed', 'request body could not be read', {
      fields: [{ field: 'body', message: 'could not be read' }],
    });
  }
  return new HttpError('internal', 'internal error');
}
