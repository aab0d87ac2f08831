import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import { findActiveApiKey, markApiKeyUsed, type Capability } from '../db/api-keys.ts';
import type { ApiKeyRow, Database } from '../db/schema.ts';
import { findActiveApiKeyWithSkill, type SkillRead } from '../db/skills.ts';
import { HttpError } from './errors.ts';

/** Who is calling: resolved once per request from the bearer key. */
export type Principal = { tenantId: string; userId: string; capabilities: string[] };

const bearer = (header: string | undefined) => /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];

/** Requires a live API key; 401 for a missing, unknown or revoked one. */
export function authenticate(db: Kysely<Database>): RequestHandler {
  return async (req, res, next) => {
    await admit(db, res, await findActiveApiKey(db, presented(req)));
    next();
  };
}

/**
 * `authenticate` for `POST /missions`, with the same answers: the skill the body names (its owner's, with the active
 * version) is read in the key's statement and left in `res.locals.skillRead`, for the start to take instead of reading
 * it again. The body is not checked yet: a name that is not a string reads no skill.
 */
export function authenticateStart(db: Kysely<Database>): RequestHandler {
  return async (req, res, next) => {
    const key = presented(req);
    const named = (req.body as { skill?: unknown } | undefined)?.skill;
    const skill = typeof named === 'string' ? named.trim() : '';
    if (!skill) {
      await admit(db, res, await findActiveApiKey(db, key));
      return next();
    }
    const read = await findActiveApiKeyWithSkill(db, key, skill);
    await admit(db, res, read?.key);
    res.locals.skillRead = read?.skill satisfies SkillRead | undefined;
    next();
  };
}

function presented(req: Request): string {
  const key = bearer(req.get('authorization'));
  if (!key) throw new HttpError('unauthorized', 'missing bearer API key');
  return key;
}

async function admit(db: Kysely<Database>, res: Response, row: ApiKeyRow | undefined): Promise<void> {
  if (!row) throw new HttpError('unauthorized', 'unknown or revoked API key');
  await markApiKeyUsed(db, row);
  res.locals.principal = { tenantId: row.tenant_id, userId: row.user_id, capabilities: row.capabilities } satisfies Principal;
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
