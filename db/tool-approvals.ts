import { sql, type Kysely } from 'kysely';
import { fromMission, whereOwner, type Owner } from './owner.ts';
import type { Database } from './schema.ts';
import { missionLinks, missionSource, webhookEventInsert } from './webhook-events.ts';

/** A call to approve, as the workflow asks: owner and tenant come from the mission row. */
export type ApprovalRequest = {
  missionId: string;
  turn: number;
  toolUseId: string;
  tool: string;
  input: Record<string, unknown>;
  requestedAt: string;
  expiresAt: string;
};

/**
 * Writes a pending approval once per call, with its `approval.requested` webhook deliveries in the same statement: a
 * retried activity writes no second row and enqueues no delivery twice.
 */
export async function insertApprovalRequest(db: Kysely<Database>, r: ApprovalRequest): Promise<void> {
  await db
    .with('deliveries', (qc) =>
      webhookEventInsert(qc, missionSource(r.missionId), [
        {
          type: 'approval.requested',
          eventKey: `${r.missionId}/approval/${r.turn}/${r.toolUseId}`,
          data: {
            missionId: r.missionId,
            toolUseId: r.toolUseId,
            tool: r.tool,
            status: 'pending',
            expiresAt: r.expiresAt,
            links: { ...missionLinks(r.missionId), approvals: '/api/v1/approvals' },
          },
        },
      ]),
    )
    .insertInto('tool_approvals')
    .columns(['tenant_id', 'user_id', 'mission_id', 'turn', 'tool_use_id', 'tool', 'input', 'status', 'requested_at', 'expires_at'])
    .expression((eb) =>
      fromMission(eb, r.missionId, [
        sql`${r.turn}::integer`.as('turn'),
        sql`${r.toolUseId}`.as('tool_use_id'),
        sql`${r.tool}`.as('tool'),
        sql`${JSON.stringify(r.input)}::jsonb`.as('input'),
        sql`'pending'`.as('status'),
        sql`${r.requestedAt}::timestamptz`.as('requested_at'),
        sql`${r.expiresAt}::timestamptz`.as('expires_at'),
      ]),
    )
    .onConflict((oc) => oc.constraint('tool_approvals_call').doNothing())
    .execute();
}

/** Records how a pending approval ended; the first ending stands (a retried activity changes nothing). */
export async function endApproval(
  db: Kysely<Database>,
  call: { missionId: string; turn: number; toolUseId: string },
  end: { status: string; decidedAt: string; reason?: string | undefined; editedInput?: Record<string, unknown> | undefined },
): Promise<void> {
  await db
    .updateTable('tool_approvals')
    .set({
      status: end.status,
      decided_at: end.decidedAt,
      reason: end.reason ?? null,
      edited_input: end.editedInput ? JSON.stringify(end.editedInput) : null,
    })
    .where('mission_id', '=', call.missionId)
    .where('turn', '=', call.turn)
    .where('tool_use_id', '=', call.toolUseId)
    .where('status', '=', 'pending')
    .execute();
}

/** The owner's approvals still waiting for a decision, oldest first, after an optional `seq` cursor. */
export async function listPendingApprovals(db: Kysely<Database>, owner: Owner, page: { limit: number; afterSeq?: string }) {
  let q = db
    .selectFrom('tool_approvals')
    .innerJoin('missions', 'missions.id', 'tool_approvals.mission_id')
    .select([
      sql<string>`tool_approvals.seq::text`.as('seq'),
      'tool_approvals.mission_id',
      'tool_approvals.turn',
      'tool_approvals.tool_use_id',
      'tool_approvals.tool',
      'tool_approvals.input',
      'tool_approvals.requested_at',
      'tool_approvals.expires_at',
      'missions.skill_name',
      'missions.objective',
    ])
    .where('tool_approvals.tenant_id', '=', owner.tenantId)
    .where('tool_approvals.user_id', '=', owner.userId)
    .where('tool_approvals.status', '=', 'pending')
    // A mission that ended without the workflow recording the end (terminated) leaves nothing to decide.
    .where('missions.status', '=', 'running');
  if (page.afterSeq !== undefined) q = q.where('tool_approvals.seq', '>', page.afterSeq);
  return q.orderBy('tool_approvals.seq').limit(page.limit).execute();
}

/** Whether the mission ever asked for approval of this call (for the 404/409 of a mission that is over). */
export async function findApproval(db: Kysely<Database>, owner: Owner, missionId: string, toolUseId: string) {
  return db
    .selectFrom('tool_approvals')
    .select([sql<string>`seq::text`.as('seq'), 'status', 'tool', 'turn'])
    .where(whereOwner(owner))
    .where('mission_id', '=', missionId)
    .where('tool_use_id', '=', toolUseId)
    .orderBy('seq', 'desc')
    .executeTakeFirst();
}
