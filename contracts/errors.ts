// Services say what went wrong in the domain's words; the HTTP edge (server/errors.ts) alone turns each kind into a
// status and one of the API's closed set of codes. `details` is sent as it is (e.g. `{ fields: [{ field, message }] }`).

/** A failure a service reports; its class is its kind. */
export class DomainError extends Error {
  readonly details: unknown;
  constructor(message: string, details?: unknown) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** What the request names does not exist (or is not the caller's). */
export class NotFoundError extends DomainError {}

/** The thing exists but is in a state that refuses this (already finished, already retried, a name taken). */
export class ConflictError extends DomainError {}

/** The request is wrong in itself; `details.fields` names each bad field. */
export class ValidationError extends DomainError {}

/** The request is well-formed but cannot be carried out as asked (no skill matches, no price for a budget). */
export class UnprocessableError extends DomainError {}

/** What was sent is over a configured size limit. */
export class TooLargeError extends DomainError {}

/** Too many at once for this caller: try again after `retryAfterS` seconds. */
export class RateLimitedError extends DomainError {
  readonly retryAfterS: number;
  constructor(message: string, retryAfterS: number, details?: unknown) {
    super(message, details);
    this.retryAfterS = retryAfterS;
  }
}

/** Something this needs is out of reach for now (a worker that did not confirm, no upload slot): retry. */
export class UnavailableError extends DomainError {}

/** No mission can reach the model: the server's model endpoint is not configured. */
export class ModelUnconfiguredError extends DomainError {}
