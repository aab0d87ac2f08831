import { Router } from 'express';
import { z } from 'zod';
import { listFeed } from '../../db/feed.ts';
import type { FeedRow } from '../../db/schema.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cursorKey, nextCursor, SEQ_KIND, seqCursorParam } from '../cursor.ts';
import { queryInt, validate } from '../validate.ts';
import { page, routeGroup, timestamp } from '../openapi/route-doc.ts';

const listQuery = z
  .object({
    limit: queryInt(1, 100).default(50),
    cursor: seqCursorParam().optional(),
    missionId: z.string().trim().min(1).max(64).optional(),
  })
  .strict();

/** The OpenAPI documentation of the route below. */
export const feedRouteDocs = routeGroup('/api/v1/activity', 'feed', [
  {
    method: 'get',
    path: '/',
    summary: "The caller's feed: tool starts and ends, mission ends, newest first",
    access: { capabilities: ['mission.read'] },
    query: listQuery,
    responses: {
      200: page(
        z.looseObject({ id: z.union([z.number(), z.string()]), at: timestamp, kind: z.string(), missionId: z.string().nullable() }),
      ),
    },
  },
]);

/** The caller's feed (tool starts and ends, mission ends), newest first, cursor-paginated. */
export function feedRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.use(authenticate(db));
  router.get('/', requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const q = res.locals.query as z.infer<typeof listQuery>;
    const rows = await listFeed(db, principal(res), {
      limit: q.limit,
      ...(q.cursor !== undefined ? { beforeId: cursorKey(q.cursor) } : {}),
      ...(q.missionId !== undefined ? { missionId: q.missionId } : {}),
    });
    res.json({ items: rows.map(view), nextCursor: nextCursor(rows, q.limit, SEQ_KIND, (r) => r.id) });
  });
  return router;
}

const view = (a: FeedRow) => ({
  id: a.id,
  at: a.created_at,
  kind: a.kind,
  missionId: a.mission_id,
  ...(a.tool !== null ? { tool: a.tool } : {}),
  ...(a.tool_use_id !== null ? { toolUseId: a.tool_use_id } : {}),
  ...(a.outcome !== null ? { outcome: a.outcome } : {}),
  ...(a.duration_ms !== null ? { durationMs: a.duration_ms } : {}),
  ...(a.error !== null ? { error: a.error } : {}),
  ...(a.details !== null ? { details: a.details } : {}),
});
