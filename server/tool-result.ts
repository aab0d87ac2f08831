import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { feedHasToolCall } from '../db/feed.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { CLIENT_CALL_NOT_WAITING, toolResultUpdate, type ClientToolReply, type ClientToolResult } from '../contracts/client-tools.ts';
import { TOOL_CALL_NOT_FOUND } from '../contracts/mission.ts';
import { ConflictError, NotFoundError, ValidationError } from '../contracts/errors.ts';
import { sendUpdate } from './mission-update.ts';
import { queryState } from './mission-view.ts';
import { schemaField } from './tool-decision.ts';

type Deps = { db: Kysely<Database>; temporal: Client; registry: AppRegistry };

/**
 * Completes one waiting client tool call with one update: the workflow's validator decides (unknown → 404, not waiting
 * → 409) atomically with the result. An output is checked first against the tool's `output_schema` (400 naming the
 * field); the call's tool cannot change meanwhile, so that check needs no atomicity.
 */
export async function submitToolResult(
  deps: Deps,
  mission: MissionRow,
  toolUseId: string,
  result: ClientToolResult,
): Promise<ClientToolReply> {
  if (mission.status === 'running') {
    if ('output' in result) await checkOutput(deps, mission.id, toolUseId, result.output);
    const reply = await sendUpdate(
      deps.temporal,
      mission.id,
      (handle) => handle.executeUpdate(toolResultUpdate, { args: [toolUseId, result] }),
      {
        unavailable: 'no worker confirmed the result in time (it may still take effect): try again',
        refusals: {
          [TOOL_CALL_NOT_FOUND]: () => new NotFoundError('tool call not found'),
          [CLIENT_CALL_NOT_WAITING]: (message) => new ConflictError(message),
        },
      },
    );
    if (reply) return reply;
  }
  // The mission is over (or not running): no call waits; Postgres says whether the call existed.
  if (!(await feedHasToolCall(deps.db, mission.id, toolUseId))) throw new NotFoundError('tool call not found');
  throw new ConflictError(`the mission is ${mission.status}: no call waits for a result`);
}

/** 400 naming each field of the output its tool's output schema refuses. */
async function checkOutput(deps: Deps, missionId: string, toolUseId: string, output: unknown): Promise<void> {
  const name = (await queryState(deps.temporal, missionId))?.tools.findLast((t) => t.toolUseId === toolUseId)?.name;
  // Unknown here, or no schema: the update decides (404, 409) and the output stands as sent.
  const validate = name === undefined ? undefined : deps.registry.getTool(name)?.client?.validateOutput;
  if (!validate || validate(output)) return;
  const fields = (validate.errors ?? []).map((e) => schemaField(e, 'output'));
  throw new ValidationError(`invalid output for ${name}: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, { fields });
}
