import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import { findActiveApiKey, markApiKeyUsed, type Capability } from '../db/api-keys.ts';
import type { Database } from '../db/schema.ts';
import { HttpError } from './errors.ts';

/** Who is calling: resolved once per request from the bearer key. */
export type Principal = { tenantId: string; userId: string; capabilities: string[] };

const bearer = (header: string | undefined) => /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];

/** Requires a live API key; 401 for a missing, unknown or revoked one. */
export function authenticate(db: Kysely<Database>): RequestHandler {
  return async (req, res, next) => {
    const key = bearer(req.get('authorization'));
    if (!key) throw new HttpError('unauthorized', 'missing bearer API key');
    const row = await findActiveApiKey(db, key);
    if (!row) throw new HttpError('unauthorized', 'unknown or revoked API key');
    await markApiKeyUsed(db, row);
    res.locals.principal = { tenantId: row.tenant_id, userId: row.user_id, capabilities: row.capabilities } satisfies Principal;
    next();
  };
}

/** 403 unless the caller's key carries the capability. */
export function requireCapability(capability: Capability): RequestHandler {
  return (_req, res, next) => {
    if (!principal(res).capabilities.includes(capability)) {
      throw new HttpError('forbidden', `this API key lacks the ${capability} capability`);
    }
    next();
  };
}

export const principal = (res: Response): Principal => res.locals.principal as Principal;

/** Only the admin key from CADENZA_ADMIN_KEY passes; with none configured the admin API is closed. */
export function requireAdmin(adminKey: string | undefined): RequestHandler {
  return (req, _res, next) => {
    const key = bearer(req.get('authorization'));
    if (!key) throw new HttpError('unauthorized', 'missing bearer admin key');
    if (!adminKey || !safeEqual(key, adminKey)) throw new HttpError('unauthorized', 'invalid admin key');
    next();
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether the request carries the admin key (for routes that answer users and admins differently). */
export function isAdminRequest(header: string | undefined, adminKey: string | undefined): boolean {
  const key = bearer(header);
  return key !== undefined && adminKey !== undefined && safeEqual(key, adminKey);
}
