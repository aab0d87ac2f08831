import { Router } from 'express';
import { z } from 'zod';
import { findOwnedMission } from '../../db/missions.ts';
import { listPendingApprovals } from '../../db/tool-approvals.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { cursorKey, nextCursor, SEQ_KIND, seqCursorParam } from '../cursor.ts';
import { notFound } from '../errors.ts';
import { decideToolCall } from '../tool-decision.ts';
import { queryInt, validate } from '../validate.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';

const approveBody = z
  .object({ input: z.record(z.string(), z.unknown()).optional() })
  .strict()
  .default({});
const denyBody = z
  .object({ reason: z.string().trim().min(1).max(2_000).optional() })
  .strict()
  .default({});
const listQuery = z
  .object({
    limit: queryInt(1, 100).default(50),
    cursor: seqCursorParam().optional(),
  })
  .strict();

const decisionSchema = z.looseObject({ toolUseId: z.string(), decision: z.enum(['approved', 'denied']) });
const run = { capabilities: ['mission.run' as const] };
/** The OpenAPI documentation of the routes below. */
export const approvalRouteDocs = routeGroup('/api/v1', 'approvals', [
  {
    method: 'post',
    path: '/missions/:id/tools/:toolUseId/approve',
    summary: "Approve a call awaiting approval, optionally with an edited input (checked against the tool's schema)",
    access: run,
    body: approveBody,
    responses: { 200: decisionSchema },
  },
  {
    method: 'post',
    path: '/missions/:id/tools/:toolUseId/deny',
    summary: 'Deny a call awaiting approval: it never runs; the model reads the reason',
    access: run,
    body: denyBody,
    responses: { 200: decisionSchema },
  },
  {
    method: 'get',
    path: '/approvals',
    summary: "The caller's calls awaiting a decision, across missions, oldest first",
    access: { capabilities: ['mission.read'] },
    query: listQuery,
    responses: {
      200: z.looseObject({
        items: z.array(
          z.looseObject({
            missionId: z.string(),
            toolUseId: z.string(),
            tool: z.string(),
            turn: z.number().int(),
            input: z.unknown(),
            requestedAt: timestamp,
            expiresAt: timestamp,
            links: z.looseObject({ approve: z.string(), deny: z.string(), mission: z.string() }),
          }),
        ),
        nextCursor: z.string().nullable(),
      }),
    },
  },
]);

/** Human approval of tool calls: approve (optionally with an edited input) or deny one call; list what waits. */
export function approvalsRouter(deps: ApiDeps): Router {
  const { db } = deps;
  const router = Router();
  const auth = authenticate(db);
  const owned = async (res: Parameters<typeof principal>[0], id: string) => {
    const row = await findOwnedMission(db, principal(res), id);
    if (!row) throw notFound('mission');
    return row;
  };

  // One decision route per verb: the body (an edited input, or a reason) joins the decision as it is.
  for (const [verb, decision, body] of [
    ['approve', 'approve', approveBody],
    ['deny', 'deny', denyBody],
  ] as const) {
    router.post(
      `/missions/:id/tools/:toolUseId/${verb}`,
      auth,
      requireCapability('mission.run'),
      validate('body', body),
      async (req, res) => {
        const row = await owned(res, String(req.params.id));
        const given = res.locals.body as z.infer<typeof approveBody> & z.infer<typeof denyBody>;
        res.json(await decideToolCall(deps, principal(res), row, String(req.params.toolUseId), { decision, ...given }));
      },
    );
  }

  router.get('/approvals', auth, requireCapability('mission.read'), validate('query', listQuery), async (_req, res) => {
    const { limit, cursor } = res.locals.query as z.infer<typeof listQuery>;
    const rows = await listPendingApprovals(db, principal(res), { limit, ...(cursor ? { afterSeq: cursorKey(cursor) } : {}) });
    res.json({
      items: rows.map((r) => {
        const call = `/api/v1/missions/${r.mission_id}/tools/${r.tool_use_id}`;
        return {
          missionId: r.mission_id,
          toolUseId: r.tool_use_id,
          tool: r.tool,
          turn: r.turn,
          input: r.input,
          requestedAt: r.requested_at,
          expiresAt: r.expires_at,
          skill: r.skill_name,
          objective: r.objective,
          links: { approve: `${call}/approve`, deny: `${call}/deny`, mission: `/api/v1/missions/${r.mission_id}` },
        };
      }),
      nextCursor: nextCursor(rows, limit, SEQ_KIND, (r) => r.seq),
    });
  });
  return router;
}
