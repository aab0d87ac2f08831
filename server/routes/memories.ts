import { Router } from 'express';
import { z } from 'zod';
import { deleteOwnedMemory, insertMemory, listMemories } from '../../db/memories.ts';
import type { MemoryRow } from '../../db/schema.ts';
import { embedForStorage, retrieveMemories } from '../../memory/retrieve.ts';
import type { ApiDeps } from '../deps.ts';
import { page, routeGroup, timestamp } from '../openapi/route-doc.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cursorKey, nextCursor, SEQ_KIND, seqCursorParam } from '../cursor.ts';
import { notFound } from '../errors.ts';
import { queryInt, validate } from '../validate.ts';

const workspaceCode = z.string().trim().min(1).max(128);
const newMemory = z
  .object({
    // Patterns, not only trims: the OpenAPI document states that a blank string is refused (Schemathesis sent "\f").
    content: z.string().regex(/\S/, 'must not be blank').trim().max(4_000),
    workspaceCode: workspaceCode.optional(),
    tags: z.array(z.string().regex(/\S/, 'must not be blank').trim().max(64)).max(10).optional(),
  })
  .strict();
const listQuery = z
  .object({
    workspaceCode: workspaceCode.optional(),
    q: z.string().trim().min(1).max(1_000).optional(),
    limit: queryInt(1, 100).default(20),
    cursor: seqCursorParam().optional(),
  })
  .strict();

const memorySchema = z.looseObject({
  id: z.string(),
  content: z.string(),
  workspaceCode: z.string().nullable(),
  tags: z.array(z.string()),
  source: z.string(),
  missionId: z.string().nullable(),
  createdAt: timestamp,
});
/** The OpenAPI documentation of the routes below. */
export const memoryRouteDocs = routeGroup('/api/v1/memories', 'memories', [
  {
    method: 'get',
    path: '/',
    summary: "List (newest first) or search (`q`) the caller's memories",
    access: { capabilities: ['mission.read'] },
    query: listQuery,
    responses: { 200: page(memorySchema) },
  },
  {
    method: 'post',
    path: '/',
    summary: 'Add a memory',
    access: { capabilities: ['mission.run'] },
    body: newMemory,
    responses: { 201: memorySchema },
  },
  {
    method: 'delete',
    path: '/:id',
    summary: 'Delete a memory',
    access: { capabilities: ['mission.run'] },
    responses: { 204: { media: 'none' } },
  },
]);

/** The caller's memories: list (newest first) or search (`q`: hybrid retrieval), add, delete. */
export function memoriesRouter(deps: ApiDeps): Router {
  const { db, embeddings, vectors, logger } = deps;
  const router = Router();
  router.use(authenticate(db));

  router.get('/', requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const q = res.locals.query as z.infer<typeof listQuery>;
    const owner = principal(res);
    if (q.q !== undefined) {
      const scope = { owner, ...(q.workspaceCode !== undefined ? { workspaceCode: q.workspaceCode } : {}) };
      const rows = await retrieveMemories({ db, embeddings, vectors, logger }, scope, q.q, Math.min(q.limit, 20));
      return void res.json({ items: rows.map(view), nextCursor: null });
    }
    const rows = await listMemories(db, owner, {
      limit: q.limit,
      ...(q.workspaceCode !== undefined ? { workspaceCode: q.workspaceCode } : {}),
      ...(q.cursor !== undefined ? { beforeSeq: cursorKey(q.cursor) } : {}),
    });
    res.json({ items: rows.map(view), nextCursor: nextCursor(rows, q.limit, SEQ_KIND, (r) => r.seq) });
  });

  router.post('/', requireCapability('mission.run'), validate('body', newMemory), async (_req, res) => {
    const body = res.locals.body as z.infer<typeof newMemory>;
    const embedding = await embedForStorage({ db, embeddings, logger }, body.content);
    const { row } = await insertMemory(db, {
      owner: principal(res),
      workspaceCode: body.workspaceCode ?? null,
      content: body.content,
      tags: body.tags ?? [],
      source: 'user',
      embedding,
    });
    res.status(201).json(view(row));
  });

  router.delete('/:id', requireCapability('mission.run'), async (req, res) => {
    if (!(await deleteOwnedMemory(db, principal(res), String(req.params.id)))) throw notFound('memory');
    res.status(204).end();
  });
  return router;
}

const view = (m: MemoryRow) => ({
  id: m.id,
  content: m.content,
  workspaceCode: m.workspace_code,
  tags: m.tags,
  source: m.source,
  missionId: m.mission_id,
  createdAt: m.created_at,
});
