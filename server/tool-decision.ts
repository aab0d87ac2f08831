import type { Client } from '@temporalio/client';
import type { ErrorObject } from 'ajv';
import type { Kysely } from 'kysely';
import { feedHasToolCall } from '../db/feed.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { findApproval } from '../db/tool-approvals.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { APPROVAL_NOT_PENDING, decideToolUpdate, type ToolDecision, type ToolDecisionReply } from '../contracts/approvals.ts';
import { TOOL_CALL_FINISHED, TOOL_CALL_NOT_FOUND } from '../contracts/mission.ts';
import { ConflictError, NotFoundError, ValidationError } from '../contracts/errors.ts';
import { sendUpdate } from './mission-update.ts';
import { queryState } from './mission-view.ts';

type Deps = { db: Kysely<Database>; temporal: Client; registry: AppRegistry };

/**
 * Approves or denies one call that awaits approval, with one update: the workflow's validator decides (unknown → 404,
 * decided or over → 409) atomically with the decision. An edited input is checked first against the tool's schema
 * (400 naming the field); the call's tool cannot change meanwhile, so that check needs no atomicity.
 */
export async function decideToolCall(
  deps: Deps,
  owner: Owner,
  mission: MissionRow,
  toolUseId: string,
  decision: ToolDecision,
): Promise<ToolDecisionReply> {
  const approval = await findApproval(deps.db, owner, mission.id, toolUseId);
  if (mission.status === 'running') {
    if (decision.input) await checkEditedInput(deps, mission.id, toolUseId, approval?.tool, decision.input);
    // Named by the approval and the decision: a client retrying after a 503 re-attaches to the same update (Temporal
    // dedupes update ids within a run) and gets its answer, instead of a 409 from its own first try.
    const updateId = approval ? `decide/${approval.seq}/${decision.decision}` : undefined;
    const reply = await sendUpdate(
      deps.temporal,
      mission.id,
      (handle) => handle.executeUpdate(decideToolUpdate, { args: [toolUseId, decision], ...(updateId ? { updateId } : {}) }),
      {
        unavailable: 'no worker confirmed the decision in time (it may still take effect): try again',
        refusals: {
          [TOOL_CALL_NOT_FOUND]: () => new NotFoundError('tool call not found'),
          [TOOL_CALL_FINISHED]: (message) => new ConflictError(message),
          [APPROVAL_NOT_PENDING]: (message) => new ConflictError(message),
        },
      },
    );
    if (reply) return reply;
  }
  // The mission is over: nothing can be decided any more; Postgres says whether the call existed.
  const known = approval ?? (await feedHasToolCall(deps.db, mission.id, toolUseId));
  if (!known) throw new NotFoundError('tool call not found');
  throw new ConflictError('the mission has already finished');
}

/** 400 naming each field of the edited input its tool's JSON Schema refuses. */
async function checkEditedInput(
  deps: Deps,
  missionId: string,
  toolUseId: string,
  tool: string | undefined,
  input: Record<string, unknown>,
) {
  // The approval row is written as the wait begins; the workflow's state knows the call a moment earlier.
  const name = tool ?? (await queryState(deps.temporal, missionId))?.tools.findLast((t) => t.toolUseId === toolUseId)?.name;
  if (name === undefined) return; // unknown here: the update refuses it (404)
  const definition = deps.registry.getTool(name);
  if (!definition)
    throw new ValidationError(`the input of ${name} cannot be edited`, {
      fields: [{ field: 'input', message: `${name} has no input schema here to check an edit against` }],
    });
  if (definition.validateInput(input)) return;
  const fields = (definition.validateInput.errors ?? []).map((e) => schemaField(e, 'input'));
  throw new ValidationError(`invalid input for ${name}: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, {
    fields,
  });
}

/** An Ajv error as `{field, message}`: `<root>.target` for `/target`, the missing property for `required`. */
export function schemaField(e: ErrorObject, root: string): { field: string; message: string } {
  const path = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
  if (e.keyword === 'additionalProperties') path.push(String((e.params as { additionalProperty: string }).additionalProperty));
  return { field: [root, ...path].join('.'), message: e.message ?? 'is invalid' };
}
