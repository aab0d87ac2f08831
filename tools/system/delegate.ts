import { DELEGATE, type DelegationRequest } from '../../contracts/delegation.ts';
import { MAX_TURNS_CEILING } from '../../contracts/limits.ts';
import type { CatalogEntry } from '../../db/schema.ts';
import { SYSTEM_APP_ID } from './system-tool.ts';

/**
 * `delegate`: hands part of the work to another of the owner's skills, which runs as a child mission with its own
 * transcript, context and tools; its answer is the call's result. Not in the system tool registry: it is offered only
 * to a skill that lists `metadata.cadenza-delegates`, and the mission workflow runs it as a child workflow, never as a
 * tool activity (workflows/delegate-call.ts).
 */
export function delegateCatalogEntry(delegates: readonly string[]): CatalogEntry {
  return {
    name: DELEGATE,
    description:
      'Hands a self-contained part of the work to another skill, which runs it as a sub-mission with its own context and tools, and returns its final answer. Give it a complete objective: it does not see this conversation.',
    inputSchema: {
      type: 'object',
      properties: {
        skill: { enum: [...delegates], description: 'The skill that does the work.' },
        objective: { type: 'string', minLength: 1, maxLength: 8000, description: 'What the sub-mission must achieve, self-contained.' },
        maxCostUsd: { type: 'number', exclusiveMinimum: 0, description: "At most this much of this mission's remaining cost budget." },
        maxTurns: { type: 'integer', minimum: 1, maximum: MAX_TURNS_CEILING, description: 'The turn limit of the sub-mission.' },
      },
      required: ['skill', 'objective'],
      additionalProperties: false,
    },
    qualifiedName: `${SYSTEM_APP_ID}.${DELEGATE}`,
    // The child mission has its own limits; the call's timeout is not used (it is no activity).
    timeoutS: 3600,
    retries: 0,
  };
}

/** The call's input as the model gave it, checked by hand (the model may ignore the schema); a problem is the model's to fix. */
export function parseDelegation(input: Record<string, unknown>): { ok: true; request: DelegationRequest } | { ok: false; error: string } {
  const { skill, objective, maxCostUsd, maxTurns } = input;
  const problems = [
    typeof skill !== 'string' || skill === '' ? 'skill: must name a skill' : undefined,
    typeof objective !== 'string' || objective.trim() === '' ? 'objective: must be a non-empty text' : undefined,
    maxCostUsd !== undefined && !(typeof maxCostUsd === 'number' && maxCostUsd > 0) ? 'maxCostUsd: must be a positive number' : undefined,
    maxTurns !== undefined && !(Number.isInteger(maxTurns) && (maxTurns as number) >= 1 && (maxTurns as number) <= MAX_TURNS_CEILING)
      ? `maxTurns: must be an integer from 1 to ${MAX_TURNS_CEILING}`
      : undefined,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  return {
    ok: true,
    request: {
      skill: skill as string,
      objective: (objective as string).slice(0, 8000),
      ...(maxCostUsd !== undefined ? { maxCostUsd: maxCostUsd as number } : {}),
      ...(maxTurns !== undefined ? { maxTurns: maxTurns as number } : {}),
    },
  };
}
