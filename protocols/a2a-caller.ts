import type { Request } from 'express';
import { JsonRpcTransportError, RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import {
  ConflictError,
  DomainError,
  NotFoundError,
  RateLimitedError,
  TooLargeError,
  UnprocessableError,
  ValidationError,
} from '../contracts/errors.ts';
import { principal, type Principal } from '../server/auth.ts';
import { baseUrlOf } from './a2a-card.ts';

/** The A2A caller: the key's principal (authenticated by the same middleware as REST), and the address it reached us by. */
export class CadenzaUser implements User {
  readonly principal: Principal;
  readonly baseUrl: string;
  constructor(principal: Principal, baseUrl: string) {
    this.principal = principal;
    this.baseUrl = baseUrl;
  }
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return `${this.principal.tenantId}/${this.principal.userId}`;
  }
}

/** The SDK's `UserBuilder`: `/a2a` is behind `authenticate`, so every request has a principal. */
export const cadenzaUser = async (req: Request): Promise<User> => new CadenzaUser(principal(req.res!), baseUrlOf(req));

/** The caller of a call, refused unless its key carries the capability (as the REST route would). */
export function callerOf(context: ServerCallContext, capability?: string): CadenzaUser {
  const user = context.user;
  if (!(user instanceof CadenzaUser)) throw refusal(-32000, 'no API key');
  if (capability && !user.principal.capabilities.includes(capability))
    throw refusal(-32000, `this API key lacks the ${capability} capability`);
  return user;
}

/**
 * A service's refusal (the REST API's 4xx) as the A2A error that says the same: bad input is the request's fault
 * (invalid params), a conflict an unsupported operation; limits and unavailability get JSON-RPC's server-error code
 * -32000 with the service's own message (A2A defines no code for them). Anything else is a fault and goes as it is.
 */
export function asA2AError(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err instanceof NotFoundError || err instanceof ValidationError || err instanceof UnprocessableError || err instanceof TooLargeError)
    return new RequestMalformedError(err.message);
  if (err instanceof ConflictError) return new UnsupportedOperationError(err.message);
  if (err instanceof RateLimitedError) return refusal(-32000, `${err.message} (retry after ${err.retryAfterS} s)`);
  return refusal(-32000, err.message);
}

function refusal(code: number, message: string): Error {
  return new JsonRpcTransportError({ jsonrpc: '2.0', id: null, error: { code, message } });
}
